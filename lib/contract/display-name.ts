import { z } from "zod";
import { invisibleCharacter } from "./invisible";

/**
 * A name a person gives in Baton (a token, a webhook, an integration, a budget's project):
 * trimmed, 1 to `max` characters, and without characters a person cannot see (control,
 * zero-width, bidirectional), which would make two names look alike on the admin pages.
 * PostgreSQL cannot store U+0000 in text at all: refused here, it is a 400 naming the field.
 */
export function displayNameSchema(field: string, max: number) {
  return z
    .string({ error: `${field} must be a string` })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`)
    .check(refuseInvisible(field));
}

/** A zod check refusing a name with a character a person cannot see, naming the field and the character. */
export function refuseInvisible(field: string) {
  return (context: z.core.ParsePayload<string>) => {
    const found = invisibleCharacter(context.value);
    if (found) {
      context.issues.push({
        code: "custom",
        input: context.value,
        message: `${field} contains ${found}, which a person cannot see; give a name without bidirectional controls, zero-width, invisible or control characters`,
      });
    }
  };
}
