import { changeUser } from "@/lib/auth/users";
import { readJsonBody } from "@/lib/http/body";
import { jsonResponse } from "@/lib/http/respond";
import { personRoute } from "@/lib/http/route";
import { z } from "zod";

/** PATCH /api/v1/users/{id} (admin): {role?, disabled?}; disabling ends the person's sessions at once. */
export const PATCH = personRoute<{ id: string }>("admin", async ({ request, params, person }) =>
  jsonResponse(await changeUser(person, params.id, await readJsonBody(request, z.unknown(), "user change"))),
);
