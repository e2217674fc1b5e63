import "server-only";
import { loadPacket } from "../threads/flagged";
import { getHumanSection } from "../threads/packet-reads";
import { renderHandoffMarkdown } from "./render-handoff";

/** A stored version as handoff.md: the agent's packet, the flags its card shows (lib/board/flags.ts, as every view gives them) and its people section. */
export async function storedPacketMarkdown(packetId: string): Promise<string> {
  const packet = await loadPacket(packetId);
  const human = await getHumanSection(packet.id);
  return renderHandoffMarkdown({ canonical: packet.canonical, flags: packet.flags, threadKey: packet.thread_key, packetId: packet.id, human });
}
