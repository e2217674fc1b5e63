import type { CanonicalPacket } from "./canonical";
import { sha256Hex } from "./canonical-json";

/**
 * The thread key rules of the contract, in order:
 * 1. `thread` when the packet names one;
 * 2. project + branch + (topic or task_id), when project or branch is present:
 *    written `project@branch#topic`;
 * 3. agent + task_id: `agent:NAME#TASK`, or `task:TASK` when no agent is named;
 * 4. the packet's own session: `session:ID`;
 * else a thread of one, named after the packet's content hash.
 */
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
