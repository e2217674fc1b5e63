import type { AttachedReport, PacketEnvelope } from "../contract/attached-reports";
import type { Flag } from "../contract/lint";
import type { PreparedPacket } from "../contract/prepare";
import type { ArrivalTicket } from "./batch-writer";

export type IngestSourceKind = "http" | "file" | "cli";

export interface IngestSource {
  kind: IngestSourceKind;
  /** Who sent it, for the ledger: `token:NAME`, `watcher`, `cli`. */
  actor: string;
  /** For watched files: the file and the workspace root (the folder holding outputs/). */
  sourcePath?: string;
  workspaceRoot?: string;
  /** The project of the token that sent it, when the token is bound to one (decision 056). */
  project?: string;
  /** An Idempotency-Key and the token it is scoped to. */
  idempotency?: { tokenId: string; key: string };
  /** The request's announcement to the writer (see batch-writer.ts), released on submit. */
  arrival?: ArrivalTicket;
  /** Verdict reports sent with the packet (an envelope's `reports`), checked and stored with a new version. */
  reports?: PacketEnvelope["reports"];
}


export interface IngestResult {
  packet_id: string;
  thread_key: string;
  flags: Flag[];
  duplicate: boolean;
  /** False when an older packet arrived late and was stored already superseded. */
  active: boolean;
  /** A watched file of a version that arrived first another way: its location was recorded now (not in the HTTP answer). */
  locationRecorded?: boolean;
}

/** A validated packet waiting for its turn in a write transaction. */
export interface PendingPacket {
  packet: PreparedPacket;
  /** Its verdict reports, checked against its pointers and redacted. */
  reports: readonly AttachedReport[];
  source: IngestSource;
  receivedAt: Date;
  /** Hash of the whole request body, for Idempotency-Key checks ("" without a key). */
  bodyHash: string;
}
