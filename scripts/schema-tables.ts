import { z } from "zod";

/**
 * Markdown tables of a zod schema's fields, for docs/api.md (./api-docs.ts):
 * the schema goes through z.toJSONSchema, and each field becomes a row with its
 * type, whether it is required, and what it accepts beyond its type.
 */

/** Nested fields are listed this deep (`a.b[].c`); deeper ones show as `object`. */
const FIELD_DEPTH = 4;

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  description?: string;
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
};

function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  return z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
}

/** Inline code; a backtick inside becomes a quote. */
export const inlineCode = (text: string) => `\`${text.replace(/`/g, "'")}\``;
/** Text that stays inside one table cell. */
export const tableCell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

function variantsOf(schema: JsonSchema): JsonSchema[] | undefined {
  return schema.anyOf ?? schema.oneOf;
}

/** A short type: `string`, `"a" \| "b"`, `integer[]`, `object`, `string \| null`. */
function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  const variants = variantsOf(schema);
  if (variants) return [...new Set(variants.map(typeOf))].join(" | ");
  if (schema.allOf) return schema.allOf.map(typeOf).join(" & ");
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length === 0) return "any";
  return types
    .map((type) => {
      if (type === "array") {
        const item = schema.items ? typeOf(schema.items) : "any";
        return item.includes(" ") ? `(${item})[]` : `${item}[]`;
      }
      if (type === "object" && !schema.properties && schema.additionalProperties && typeof schema.additionalProperties === "object") {
        return `{[key]: ${typeOf(schema.additionalProperties)}}`;
      }
      return type;
    })
    .join(" | ");
}

/** What a field accepts beyond its type: bounds, pattern, default, description. */
function notesOf(schema: JsonSchema): string {
  const notes: string[] = [];
  if (schema.description) notes.push(schema.description);
  const { minLength, maxLength } = schema;
  if (minLength && maxLength !== undefined) notes.push(`${minLength} to ${maxLength} characters`);
  else if (maxLength !== undefined) notes.push(`at most ${maxLength} characters`);
  else if (minLength) notes.push(`at least ${minLength} characters`);
  // z.number().int() bounds itself to the safe integers: not worth a note.
  const minimum = schema.minimum === Number.MIN_SAFE_INTEGER ? undefined : schema.minimum;
  const maximum = schema.maximum === Number.MAX_SAFE_INTEGER ? undefined : schema.maximum;
  if (minimum !== undefined && maximum !== undefined) notes.push(`${minimum} to ${maximum}`);
  else if (minimum !== undefined) notes.push(`at least ${minimum}`);
  else if (maximum !== undefined) notes.push(`at most ${maximum}`);
  if (schema.minItems !== undefined || schema.maxItems !== undefined) notes.push(`${schema.minItems ?? 0} to ${schema.maxItems ?? "any"} items`);
  if (schema.pattern) notes.push(`matches ${inlineCode(schema.pattern)}`);
  if (schema.format) notes.push(schema.format);
  if (schema.default !== undefined) notes.push(`default ${inlineCode(JSON.stringify(schema.default))}`);
  return notes.join("; ");
}

interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  notes: string;
}

/** The object (or objects, for a union of them) a schema describes, to list fields of. */
function objectsIn(schema: JsonSchema): JsonSchema[] {
  if (schema.properties) return [schema];
  if (schema.type === "array" && schema.items) return objectsIn(schema.items);
  const variants = variantsOf(schema)?.filter((variant) => variant.type !== "null");
  if (variants?.length === 1) return objectsIn(variants[0]!);
  return [];
}

function fieldRows(schema: JsonSchema, prefix = "", depth = 1): FieldRow[] {
  const rows: FieldRow[] = [];
  for (const object of objectsIn(schema).slice(0, 1)) {
    for (const [name, property] of Object.entries(object.properties ?? {})) {
      const full = `${prefix}${name}`;
      rows.push({ name: full, type: typeOf(property), required: object.required?.includes(name) ?? false, notes: notesOf(property) });
      if (depth >= FIELD_DEPTH) continue;
      const isList = property.type === "array" || variantsOf(property)?.some((variant) => variant.type === "array");
      rows.push(...fieldRows(property, `${full}${isList ? "[]" : ""}.`, depth + 1));
    }
  }
  return rows;
}

function fieldTable(rows: FieldRow[], withRequired: boolean): string[] {
  if (rows.length === 0) return [];
  const header = withRequired ? ["| name | type | required | accepts |", "|---|---|---|---|"] : ["| field | type | notes |", "|---|---|---|"];
  return [
    ...header,
    ...rows.map((row) =>
      withRequired
        ? `| ${inlineCode(row.name)} | ${tableCell(inlineCode(row.type))} | ${row.required ? "yes" : "no"} | ${tableCell(row.notes)} |`
        : `| ${inlineCode(row.name)} | ${tableCell(inlineCode(row.type))} | ${tableCell(row.notes)} |`,
    ),
  ];
}

/** A schema's fields; a union of objects is listed one alternative after another. */
export function schemaSection(schema: z.ZodType, io: "input" | "output", withRequired: boolean): string[] {
  const json = jsonSchemaOf(schema, io);
  const alternatives = variantsOf(json)?.filter((variant) => objectsIn(variant).length > 0);
  if (!json.properties && alternatives && alternatives.length > 1) {
    return alternatives.flatMap((alternative, index) => [`One of (${index + 1}):`, "", ...fieldTable(fieldRows(alternative), withRequired), ""]);
  }
  const rows = fieldRows(json);
  if (rows.length === 0) return [`${inlineCode(typeOf(json))}${json.additionalProperties ? ": any fields" : ""}`, ""];
  return [...fieldTable(rows, withRequired), ""];
}
