import { z } from "zod";
import { isoTime } from "../../core/iso-time";
import { threadFiltersSchema } from "../threads/filters";

/**
 * The lessons view's shapes (GET /api/v1/lessons), client-safe: the server
 * builds them in ./queries.ts, the browser renders them. Dates are ISO strings.
 */

/** How long a failure stays listed after it was last seen. */
export const LESSON_WINDOW_DAYS = 30;
/** At most this many lessons in one answer, the most recently seen first. */
export const LESSONS_MAX = 200;
/** At most this many threads named per lesson (thread_count says how many there are). */
export const LESSON_THREADS_MAX = 50;

/** The board's free-text filter: matches the attempt, the reason, or a thread's key, agent, project, branch or topic. */
export const lessonsQuerySchema = z.object({ q: threadFiltersSchema.shape.q });
export type LessonsQuery = z.infer<typeof lessonsQuerySchema>;

export const lessonThreadDto = z.object({ key: z.string(), agent: z.string().nullable(), last_seen: z.string() });
export type LessonThreadDto = z.infer<typeof lessonThreadDto>;

/** One failure (one fingerprint) that repeated across versions, maybe across threads. */
export const lessonDto = z.object({
  fingerprint: z.string(),
  /** The most recently seen wording. */
  attempt: z.string(),
  reason: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  /** Versions that carry it (the same version listing it twice counts once). */
  occurrences: z.number().int().min(2),
  thread_count: z.number().int().min(1),
  /** The threads that carry it, the most recently seen first (at most LESSON_THREADS_MAX). */
  threads: z.array(lessonThreadDto),
  first_seen: isoTime,
  last_seen: isoTime,
});
export type LessonDto = z.infer<typeof lessonDto>;

export const lessonsDto = z.object({
  generated_at: isoTime,
  window_days: z.number().int(),
  lessons: z.array(lessonDto),
  /** More lessons matched than LESSONS_MAX: the oldest were left out. */
  truncated: z.boolean(),
});
export type LessonsDto = z.infer<typeof lessonsDto>;
