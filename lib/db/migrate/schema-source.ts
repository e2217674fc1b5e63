/**
 * One schema source, two databases: the PostgreSQL schema derived from prisma/schema/ (a folder of
 * files, docs/decisions/071-schema-folder.md), and the SQL of its `/// @append-only` and
 * `/// @announced` markers (docs/decisions/023-postgresql.md, 1-2).
 */

export type Dialect = "sqlite" | "postgresql";

export const ANNOUNCE_CHANNEL = "baton_ledger";

const SQLITE_PROVIDER = /provider\s*=\s*"sqlite"/;
// `../../` from prisma/schema/; `../` in the history snapshots written before the folder.
const SQLITE_OUTPUT = /output(\s*=\s*)"((?:\.\.\/)+)lib\/generated\/prisma"/;
const SOURCE_OUTPUT = /output\s*=\s*"\.\.\/\.\.\/lib\/generated\/prisma"/;

/** One file of a schema folder: its name (e.g. `threads.prisma`) and its text. */
export interface SchemaFile {
  name: string;
  text: string;
}

/**
 * A schema folder as one text, the files in name order: what Prisma reads as one schema, what the
 * markers and the migrations are computed from, and what a history snapshot keeps.
 */
export function joinSchemaFiles(files: readonly SchemaFile[]): string {
  return [...files]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((file) => file.text)
    .join("\n");
}

/** A schema text on PostgreSQL: another provider and, one folder deeper, a client of its own. */
export function postgresqlTwin(text: string): string {
  return text
    .replace(SQLITE_PROVIDER, 'provider = "postgresql"')
    .replace(SQLITE_OUTPUT, (_, equals: string, up: string) => `output${equals}"../${up}lib/generated/prisma-postgresql"`);
}

export function derivedHeader(name: string): string {
  return (
    `// GENERATED from prisma/schema/${name} by \`npm run db:schemas\`; do not edit.\n` +
    "// The PostgreSQL twin of the source schema: same models, another provider.\n\n"
  );
}

/** The files of prisma/postgresql/schema/ for the files of prisma/schema/ (same names). */
export function derivePostgresqlSchema(files: readonly SchemaFile[]): SchemaFile[] {
  const withProvider = files.filter((file) => SQLITE_PROVIDER.test(file.text));
  if (withProvider.length !== 1) throw new Error('exactly one file of the source schema must say provider = "sqlite"');
  if (!SOURCE_OUTPUT.test(withProvider[0]!.text)) throw new Error('the source schema must say output = "../../lib/generated/prisma"');
  return files.map((file) => ({ name: file.name, text: derivedHeader(file.name) + postgresqlTwin(file.text) }));
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
