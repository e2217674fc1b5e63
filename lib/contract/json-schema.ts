import { z } from "zod";
import { packetInputSchema } from "./schema";

let cached: Record<string, unknown> | undefined;

/** The JSON Schema of the accepted packet shapes, generated from the zod schema. */
export function packetJsonSchema(): Record<string, unknown> {
  cached ??= {
    ...z.toJSONSchema(packetInputSchema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }),
    $id: "https://baton.local/schema/handoff-packet-v1.json",
  };
  return cached;
}
