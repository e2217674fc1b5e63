import { userDtoSchema, userListSchema } from "@/lib/auth/dto";
import { createUser, listUsers, newAccountSchema } from "@/lib/auth/users";
import { defineRoute } from "@/lib/http/route";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/users",
  summary: "Everyone who can sign in.",
  auth: { kind: "person", role: "admin" },
  response: { kind: "json", status: 200, schema: userListSchema },
  handler: async () => ({ users: await listUsers() }),
});

export const POST = defineRoute({
  method: "POST",
  path: "/api/v1/users",
  summary: "Creates an account.",
  auth: { kind: "person", role: "admin" },
  body: { schema: newAccountSchema, name: "user" },
  response: { kind: "json", status: 201, schema: userDtoSchema },
  errors: ["conflict"],
  handler: ({ person, body }) => createUser(person, body),
});
