import "server-only";
import { BatonError } from "../core/errors";
import { database, inTransaction, isUniqueViolation, type Tx } from "../db/client";
import { announceLedger } from "../events/bus";
import { appendLedgerEvents, type NewLedgerEvent } from "../events/ledger";
import { redactString } from "../contract/secrets";
import { archiveThreadIn } from "../human/archive";
import { config } from "../server/config";
import { readGithubDelivery } from "./github";
import { readGitlabDelivery } from "./gitlab";
import { verifyGithubSignature, verifyGitlabToken } from "./signature";
import { loadStoredWork, saveStoredWork } from "./thread-work";
import { applyChange } from "./work-state";
import type { CodeHost, CodeHostChange, DeliveryAnswerDto } from "./dto";

/**
 * One code host delivery: verified on its bytes, refused when replayed, matched to the active
 * threads of its repository and branch, and recorded (docs/decisions/067-code-host-integrations.md).
 */

/** The most active threads one delivery is attached to (one branch rarely has more than one). */
export const MATCHED_THREADS_MAX = 20;
export const DELIVERY_ID_MAX = 200;

export interface Delivery {
  host: CodeHost;
  integrationId: string;
  headers: Headers;
  body: Buffer;
  now?: Date;
}

const LEDGER_KIND = { pull_request: "code_host_pull_request", ci: "code_host_ci", review: "code_host_review" } as const;

const refused = () =>
  new BatonError("unauthenticated", "The delivery's signature does not match the integration's secret; check the secret in the code host's webhook settings.");

function deliveryIdOf(host: CodeHost, headers: Headers): string {
  const id = host === "github" ? headers.get("x-github-delivery") : (headers.get("x-gitlab-event-uuid") ?? headers.get("idempotency-key"));
  const header = host === "github" ? "X-GitHub-Delivery" : "X-Gitlab-Event-UUID or Idempotency-Key";
  if (!id || id.length > DELIVERY_ID_MAX) {
    throw new BatonError("invalid_request", `Send the delivery id in ${header} (1 to ${DELIVERY_ID_MAX} characters).`, { field: header });
  }
  return id;
}

/** Strings from the code host are stored as the ledger keeps agents' strings: with secrets redacted. */
function redacted(change: CodeHostChange): CodeHostChange {
  if (change.event !== "review" || !change.review.comment) return change;
  return { ...change, review: { ...change.review, comment: redactString(change.review.comment) } };
}

function eventData(integrationId: string, deliveryId: string, change: CodeHostChange): Record<string, unknown> {
  const { event, repository, branch, at } = change;
  const detail = event === "pull_request" ? change.pull_request : event === "ci" ? change.ci : change.review;
  return { integration_id: integrationId, delivery_id: deliveryId, repository, branch, reported_at: at, ...detail };
}

async function attach(tx: Tx, integrationId: string, deliveryId: string, change: CodeHostChange, now: Date): Promise<string[]> {
  const threads = await tx.thread.findMany({
    where: { archived: false, project: change.repository, branch: change.branch, activeVersionId: { not: null } },
    select: { key: true },
    orderBy: { updatedAt: "desc" },
    take: MATCHED_THREADS_MAX,
  });
  const events: NewLedgerEvent[] = [];
  const archiveOnMerge = config().BATON_ARCHIVE_ON_MERGE;
  for (const { key } of threads) {
    const next = applyChange(await loadStoredWork(tx, key), change);
    if (next) await saveStoredWork(tx, key, next, now);
    events.push({ kind: LEDGER_KIND[change.event], threadKey: key, actor: `integration:${integrationId}`, data: eventData(integrationId, deliveryId, change) });
  }
  await appendLedgerEvents(tx, events, now);
  if (archiveOnMerge && change.event === "pull_request" && change.pull_request.state === "merged") {
    for (const { key } of threads) {
      await archiveThreadIn(tx, key, `integration:${integrationId}`, `pull request #${change.pull_request.number} was merged`, now);
    }
  }
  return threads.map((thread) => thread.key);
}

export async function receiveDelivery({ host, integrationId, headers, body, now = new Date() }: Delivery): Promise<DeliveryAnswerDto> {
  const db = await database();
  const integration = await db.integration.findUnique({ where: { id: integrationId } });
  // An unknown integration answers as a bad signature does: nothing tells a prober which ids exist.
  if (!integration || integration.host !== host) throw refused();
  const signed =
    host === "github"
      ? verifyGithubSignature(integration.secret, body, headers.get("x-hub-signature-256"))
      : verifyGitlabToken(integration.secret, headers.get("x-gitlab-token"));
  if (!signed) throw refused();

  const deliveryId = deliveryIdOf(host, headers);
  const eventName = (host === "github" ? headers.get("x-github-event") : headers.get("x-gitlab-event")) ?? "";
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString("utf8"));
  } catch {
    throw new BatonError("invalid_json", "The delivery's body is not valid JSON.");
  }
  const read = host === "github" ? readGithubDelivery(eventName, payload, now.toISOString()) : readGitlabDelivery(eventName, payload, now.toISOString());
  if (!read) return { outcome: "ignored", threads: [] };
  const change = redacted(read);

  // The body is signed but the delivery id header is not: a captured body sent again under a new
  // id is refused by the time the host wrote into it.
  const windowMs = config().BATON_INTEGRATION_REPLAY_MINUTES * 60_000;
  if (Date.parse(change.at) < now.getTime() - windowMs) {
    throw new BatonError("conflict", `The delivery reports a time (${change.at}) older than the replay window of ${config().BATON_INTEGRATION_REPLAY_MINUTES} minutes; it was refused as a replay.`, {
      reported_at: change.at,
    });
  }

  try {
    const threads = await inTransaction(async (tx) => {
      await tx.integrationDelivery.create({
        data: {
          integrationId,
          deliveryId,
          event: change.event,
          repository: change.repository,
          branch: change.branch,
          change: JSON.stringify(change),
          matched: 0,
          receivedAt: now,
        },
      });
      const keys = await attach(tx, integrationId, deliveryId, change, now);
      if (keys.length) await tx.integrationDelivery.update({ where: { integrationId_deliveryId: { integrationId, deliveryId } }, data: { matched: keys.length } });
      return keys;
    });
    if (threads.length) announceLedger();
    return { outcome: threads.length ? "applied" : "unmatched", threads };
  } catch (error) {
    if (isUniqueViolation(error)) return { outcome: "duplicate", threads: [] };
    throw error;
  }
}
