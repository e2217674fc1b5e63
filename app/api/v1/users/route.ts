import { createUser, listUsers } from "@/lib/auth/users";
import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";
import { z } from "zod";

/** GET /api/v1/users (admin): everyone who can sign in. */
export const GET = personRoute("admin", async () => jsonResponse({ users: await listUsers() }));

/** POST /api/v1/users (admin): {username, password, role}. */
export const POST = personRoute("admin", async ({ request, person }) =>
  jsonResponse(await createUser(person, await readJsonBody(request, z.unknown(), "user")), 201),
);
