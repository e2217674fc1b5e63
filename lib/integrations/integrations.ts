import "server-only";
import { randomBytes } from "node:crypto";
import { BatonError } from "../core/errors";
import { database, inTransaction } from "../db/client";
import { newId } from "../db/ids";
import { announceLedger } from "../events/bus";
import { appendLedgerEvents } from "../events/ledger";
import { config } from "../server/config";
import {
  integrationDto,
  UNMATCHED_SHOWN,
  unmatchedDeliveryDto,
  type CodeHost,
  type CreatedIntegrationDto,
  type IntegrationDto,
  type IntegrationListDto,
  type NewIntegration,
} from "./dto";

/** Admins' code host integrations: one secret each, shown once (docs/decisions/067-code-host-integrations.md). */

interface IntegrationRow {
  id: string;
  name: string;
  host: string;
  secret: string;
  createdAt: Date;
  createdBy: string;
}

/** Where the code host posts; the id tells Baton which secret to check. */
export function integrationEndpoint(row: Pick<IntegrationRow, "id" | "host">): string {
  return `${config().BATON_PUBLIC_URL}/api/v1/integrations/${row.host}?integration=${encodeURIComponent(row.id)}`;
}

function toIntegrationDto(row: IntegrationRow): IntegrationDto {
  return integrationDto.parse({
    id: row.id,
    name: row.name,
    host: row.host as CodeHost,
    endpoint: integrationEndpoint(row),
    secret_hint: `••••${row.secret.slice(-4)}`,
    created_at: row.createdAt.toISOString(),
    created_by: row.createdBy,
  });
}

export async function createIntegration(actor: string, integration: NewIntegration): Promise<CreatedIntegrationDto> {
  const now = new Date();
  const secret = randomBytes(32).toString("base64url");
  const row = await inTransaction(async (tx) => {
    const created = await tx.integration.create({
      data: { id: newId("int", now.getTime()), name: integration.name, host: integration.host, secret, last4: secret.slice(-4), createdAt: now, createdBy: actor },
    });
    await appendLedgerEvents(tx, [{ kind: "integration_created", actor, data: { integration_id: created.id, name: created.name, host: created.host } }], now);
    return created;
  });
  announceLedger();
  return { integration: toIntegrationDto(row), secret };
}

/** Every integration and the latest deliveries that matched no active thread. */
export async function listIntegrations(): Promise<IntegrationListDto> {
  const db = await database();
  const [rows, unmatched] = await Promise.all([
    db.integration.findMany({ orderBy: { createdAt: "asc" } }),
    db.integrationDelivery.findMany({ where: { matched: 0 }, orderBy: { receivedAt: "desc" }, take: UNMATCHED_SHOWN }),
  ]);
  return {
    integrations: rows.map(toIntegrationDto),
    unmatched: unmatched.map((delivery) =>
      unmatchedDeliveryDto.parse({
        integration_id: delivery.integrationId,
        delivery_id: delivery.deliveryId,
        event: delivery.event,
        repository: delivery.repository,
        branch: delivery.branch,
        received_at: delivery.receivedAt.toISOString(),
      }),
    ),
  };
}

/** Deletes an integration: its later deliveries are refused; the ones received stay as history. */
export async function deleteIntegration(actor: string, id: string): Promise<IntegrationDto> {
  const now = new Date();
  const row = await inTransaction(async (tx) => {
    const existing = await tx.integration.findUnique({ where: { id } });
    if (!existing) throw new BatonError("not_found", `No integration has the id "${id}"; list them with GET /api/v1/integrations.`);
    await tx.integration.delete({ where: { id } });
    await appendLedgerEvents(tx, [{ kind: "integration_deleted", actor, data: { integration_id: id, name: existing.name, host: existing.host } }], now);
    return existing;
  });
  announceLedger();
  return toIntegrationDto(row);
}
