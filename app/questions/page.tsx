import type { Metadata } from "next";
import { QuestionCount } from "@/components/questions/question-count";
import { QuestionsInbox } from "@/components/questions/questions-inbox";
import { requirePagePerson } from "@/lib/auth/page-person";
import { abilitiesOf } from "@/lib/auth/roles";
import { listOpenQuestions } from "@/lib/views/questions/inbox";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Questions" };

/** The inbox and the moment it was read: ages are measured from then, on the server and in the browser alike. */
async function loadInbox() {
  const inbox = await listOpenQuestions();
  return { inbox, loadedAt: Date.now() };
}

/**
 * The questions inbox (docs/product.md#questions): every unanswered question of every agent,
 * blocking first, then oldest; answered in place, kept live in the browser.
 */
export default async function QuestionsPage() {
  const person = await requirePagePerson("/questions");
  const { inbox, loadedAt } = await loadInbox();
  return (
    <main id="main" className="mx-auto w-full max-w-4xl flex-1 space-y-4 overflow-y-auto p-4">
      <h1 className="text-2xl font-bold">
        Questions{" "}
        <QuestionCount initialInbox={inbox} loadedAt={loadedAt} />
      </h1>
      <QuestionsInbox initialInbox={inbox} loadedAt={loadedAt} canAnswer={abilitiesOf(person.role).act} />
    </main>
  );
}
