import { z } from "zod";
import { defineRoute } from "@/lib/http/route";
import { packetDto } from "@/lib/views/threads/dto";
import { loadPacket } from "@/lib/views/threads/flagged";

export const GET = defineRoute({
  method: "GET",
  path: "/api/v1/packets/{id}",
  summary: "One stored version, as received and canonical, with its flags.",
  auth: { kind: "reader" },
  params: z.object({ id: z.string() }),
  response: { kind: "json", status: 200, schema: packetDto },
  errors: ["not_found"],
  handler: ({ params }) => loadPacket(params.id),
});
