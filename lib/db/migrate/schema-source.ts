/**
 * One schema source, two databases: the PostgreSQL schema derived from prisma/schema.prisma,
 * and the SQL of its `/// @append-only` and `/// @announced` markers (docs/decisions/023-postgresql.md, 1-2).
 */

export type Dialect = "sqlite" | "postgresql";

export const ANNOUNCE_CHANNEL = "baton_ledger";

const SQLITE_PROVIDER = /provider\s*=\s*"sqlite"/;
const SQLITE_OUTPUT = /output\s*=\s*"\.\.\/lib\/generated\/prisma"/;

export const DERIVED_HEADER =
  "// GENERATED from prisma/schema.prisma by `npm run db:schemas`; do not edit.\n" +
  "// The PostgreSQL twin of the source schema: same models, another provider.\n\n";

/** The PostgreSQL schema file's text for a source schema's text. */
export function derivePostgresqlSchema(source: string): string {
  if (!SQLITE_PROVIDER.test(source)) throw new Error('the source schema must say provider = "sqlite"');
  if (!SQLITE_OUTPUT.test(source)) throw new Error('the source schema must say output = "../lib/generated/prisma"');
  return (
    DERIVED_HEADER +
    source
      .replace(SQLITE_PROVIDER, 'provider = "postgresql"')
      // One folder deeper (prisma/postgresql/), and a client of its own.
      .replace(SQLITE_OUTPUT, 'output = "../../lib/generated/prisma-postgresql"')
  );
}

export interface ModelMarkers {
  appendOnly: string[];
  announced: string[];
}

/** Models carrying the markers, in schema order. */
export function modelMarkers(schema: string): ModelMarkers {
  const markers: ModelMarkers = { appendOnly: [], announced: [] };
  let comments: string[] = [];
  for (const line of schema.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith("///")) {
      comments.push(trimmed);
      continue;
    }
    const model = /^model\s+(\w+)\s*\{/.exec(trimmed);
    if (model) {
      if (comments.some((comment) => /^\/\/\/\s*@append-only\b/.test(comment))) markers.appendOnly.push(model[1]!);
      if (comments.some((comment) => /^\/\/\/\s*@announced\b/.test(comment))) markers.announced.push(model[1]!);
    }
    comments = [];
  }
  return markers;
}

const ROW_GUARD_FUNCTION = "baton_refuse_change";
const ANNOUNCE_FUNCTION = "baton_announce_ledger";

/**
 * SQL for what the markers say, for the models that gained a marker between
 * two versions of the source (`before` null: from an empty database).
 */
export function markerSql(dialect: Dialect, before: string | null, after: string): string {
  const had = before ? modelMarkers(before) : { appendOnly: [], announced: [] };
  const has = modelMarkers(after);
  const lost = had.appendOnly.filter((model) => !has.appendOnly.includes(model)).concat(
    had.announced.filter((model) => !has.announced.includes(model)),
  );
  if (lost.length) throw new Error(`removing a marker needs a hand-written migration (models: ${lost.join(", ")})`);
  const appendOnly = has.appendOnly.filter((model) => !had.appendOnly.includes(model));
  const announced = dialect === "postgresql" ? has.announced.filter((model) => !had.announced.includes(model)) : [];
  const statements: string[] = [];
  if (dialect === "sqlite") {
    for (const model of appendOnly) {
      for (const change of ["UPDATE", "DELETE"]) {
        statements.push(
          `CREATE TRIGGER "${model}_no_${change.toLowerCase()}" BEFORE ${change} ON "${model}"\n` +
            `BEGIN SELECT RAISE(ABORT, '${model} is append-only'); END;`,
        );
      }
    }
  } else {
    if (appendOnly.length && !had.appendOnly.length) {
      statements.push(
        `CREATE FUNCTION "${ROW_GUARD_FUNCTION}"() RETURNS trigger LANGUAGE plpgsql AS $$\n` +
          `BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END\n$$;`,
      );
    }
    for (const model of appendOnly) {
      for (const change of ["UPDATE", "DELETE"]) {
        statements.push(
          `CREATE TRIGGER "${model}_no_${change.toLowerCase()}" BEFORE ${change} ON "${model}"\n` +
            `FOR EACH ROW EXECUTE FUNCTION "${ROW_GUARD_FUNCTION}"();`,
        );
      }
      statements.push(
        `CREATE TRIGGER "${model}_no_truncate" BEFORE TRUNCATE ON "${model}"\n` +
          `FOR EACH STATEMENT EXECUTE FUNCTION "${ROW_GUARD_FUNCTION}"();`,
      );
    }
    if (announced.length && !had.announced.length) {
      // Delivered at commit, once per transaction (identical notifications fold into one).
      statements.push(
        `CREATE FUNCTION "${ANNOUNCE_FUNCTION}"() RETURNS trigger LANGUAGE plpgsql AS $$\n` +
          `BEGIN PERFORM pg_notify('${ANNOUNCE_CHANNEL}', ''); RETURN NULL; END\n$$;`,
      );
    }
    for (const model of announced) {
      statements.push(
        `CREATE TRIGGER "${model}_announce" AFTER INSERT ON "${model}"\n` +
          `FOR EACH STATEMENT EXECUTE FUNCTION "${ANNOUNCE_FUNCTION}"();`,
      );
    }
  }
  if (!statements.length) return "";
  return `\n-- From the schema's markers (lib/migrate/schema-source.ts).\n${statements.join("\n")}\n`;
}
