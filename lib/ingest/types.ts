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
}

export interface IngestResult {
  packet_id: string;
  thread_key: string;
  flags: Flag[];
  duplicate: boolean;
  /** False when an older packet arrived late and was stored already superseded. */
  active: boolean;
}

/** A validated packet waiting for its turn in a write transaction. */
export interface PendingPacket {
  packet: PreparedPacket;
  source: IngestSource;
  receivedAt: Date;
  /** Hash of the whole request body, for Idempotency-Key checks ("" without a key). */
  bodyHash: string;
}
