import { z } from "zod";
import { userDtoSchema } from "@/lib/auth/dto";
import { changeUser, userChangeSchema } from "@/lib/auth/users";
import { defineRoute } from "@/lib/http/route";

export const PATCH = defineRoute({
  method: "PATCH",
  path: "/api/v1/users/{id}",
  summary: "Changes a person's role or disables them (their sessions end at once); the last active admin can be neither demoted nor disabled.",
  auth: { kind: "person", role: "admin" },
  params: z.object({ id: z.string() }),
  body: { schema: userChangeSchema, name: "user change" },
  response: { kind: "json", status: 200, schema: userDtoSchema },
  errors: ["not_found", "conflict"],
  handler: ({ person, params, body }) => changeUser(person, params.id, body),
});
