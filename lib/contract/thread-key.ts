import type { CanonicalPacket } from "./canonical";
import { sha256Hex } from "./canonical-json";

/** The contract's thread key rules, in order (docs/contract.md#thread-keys). */
export function threadKeyFor(packet: CanonicalPacket, contentHash: string): string {
  const key = ruleKey(packet, contentHash);
  // Keys travel in URLs and CLI arguments: bound them, keeping distinct long keys distinct.
  return key.length <= THREAD_KEY_MAX_LENGTH ? key : `${key.slice(0, THREAD_KEY_MAX_LENGTH - 17)}~${sha256Hex(key).slice(0, 16)}`;
}

function ruleKey(packet: CanonicalPacket, contentHash: string): string {
  if (packet.thread) return packet.thread;
  const workstream = packet.topic ?? packet.task_id;
  if (packet.project || packet.branch) {
    return `${packet.project ?? ""}@${packet.branch ?? ""}${workstream ? `#${workstream}` : ""}`;
  }
  if (packet.task_id) return packet.agent ? `agent:${packet.agent.name}#${packet.task_id}` : `task:${packet.task_id}`;
  if (packet.session_id) return `session:${packet.session_id}`;
  return `packet:${contentHash.slice(0, 16)}`;
}

export const THREAD_KEY_MAX_LENGTH = 512;
