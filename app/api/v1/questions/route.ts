import { listOpenQuestions } from "@/lib/human/inbox";
import { jsonResponse } from "@/lib/http/respond";
import { readRoute } from "@/lib/http/route";

/** GET /api/v1/questions: the questions inbox, unanswered agent questions grouped, blocking first then oldest. */
export const GET = readRoute(async () => jsonResponse(await listOpenQuestions()));
