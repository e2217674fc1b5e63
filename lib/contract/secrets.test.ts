import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fakeChars, fakeSecrets } from "@/testing/fake-secrets";
import { PLACEHOLDER_PATTERN, placeholder, redactSecrets, redactString } from "./secrets";
import { SECRET_PATTERNS } from "./secret-patterns";

const SECRETS = fakeSecrets(1);
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_714);

describe("redactString", () => {
  it.each(SECRETS.map((item) => [item.kind, item] as const))("catches a %s", (kind, item) => {
    const redacted = redactString(item.text);
    expect(redacted).not.toContain(item.secret);
    expect(redacted).toContain(placeholder(kind));
  });

  it("catches every kind with other seeds too", () => {
    for (const seed of [2, 3, 17, 99]) {
      for (const item of fakeSecrets(seed)) expect(redactString(item.text), `${item.kind} seed ${seed}`).not.toContain(item.secret);
    }
  });

  it("keeps the text around a secret: a URL keeps its user and host, an assignment its name", () => {
    const password = fakeChars(16, 7);
    expect(redactString(`postgres://app:${password}@db.internal:5432/app?sslmode=require`)).toBe(
      "postgres://app:[redacted:url-password]@db.internal:5432/app?sslmode=require",
    );
    expect(redactString(`DB_PASSWORD=${password} npm start`)).toBe("DB_PASSWORD=[redacted:password] npm start");
    expect(redactString(`https://hooks.slack.com/services/T${fakeChars(8, 1)}/B${fakeChars(8, 2)}/${fakeChars(24, 3)}`)).toBe(
      "https://hooks.slack.com/services/[redacted:slack-webhook]",
    );
  });

  it("leaves references, masks, paths and words alone", () => {
    for (const text of [
      "password=$DB_PASSWORD",
      "token=${{ secrets.GITHUB_TOKEN }}",
      "api_key=<your key here>",
      "password: ********",
      "token_file=/etc/baton/token.txt",
      "secret: mismatched",
      "tokenizer=whitespace-tokenizer",
      "pip install sk-learn-compatible-transformers",
      "postgres://app:${PGPASSWORD}@db/app",
      "ssh://git@github.com:22/acme/app.git",
      "Bearer token expired after rotation",
      "the summary mentions api keys and passwords in prose",
      "max_tokens: 4096",
    ]) {
      expect(redactString(text), text).toBe(text);
    }
  });

  it("the placeholder is stable and matches no pattern", () => {
    for (const item of SECRETS) {
      const once = redactString(item.text);
      expect(once.match(PLACEHOLDER_PATTERN)?.length, item.text).toBeGreaterThan(0);
      expect(redactString(once)).toBe(once);
      const kinds = [...once.matchAll(PLACEHOLDER_PATTERN)].map((m) => m[0]);
      for (const kind of kinds) expect(redactString(kind)).toBe(kind);
    }
  });
});

describe("redactSecrets on JSON values", () => {
  const [github, openai, jwt, pem] = [
    SECRETS.find((s) => s.kind === "github-token")!,
    SECRETS.find((s) => s.kind === "openai-key")!,
    SECRETS.find((s) => s.kind === "jwt")!,
    SECRETS.find((s) => s.kind === "private-key")!,
  ];

  it("walks nested values, command argv strings and unknown fields, and counts what it replaced", () => {
    const packet = {
      summary: `Rotated the key; the old one was ${openai.secret}.`,
      commands_run: [{ command: ["curl", "-H", `Authorization: Bearer ${fakeChars(40, 5)}`, "https://api.example.com"], exit_code: 0 }, github.text],
      x_env: { deep: [{ deeper: { note: jwt.text } }], ssh: pem.text },
    };
    const result = redactSecrets(packet);
    const text = JSON.stringify(result.value);
    for (const secret of [openai.secret, fakeChars(40, 5), github.secret, jwt.secret, pem.secret]) expect(text).not.toContain(secret);
    expect(result.count).toBe(5);
    expect(result.kinds).toEqual(["bearer-token", "github-token", "jwt", "openai-key", "private-key"]);
    expect((result.value as typeof packet).commands_run[0]).toMatchObject({ exit_code: 0 });
    expect(packet.summary).toContain(openai.secret); // the input is not modified
  });

  it("redacts a one-word value under a key that names a credential, and leaves the key as it is", () => {
    const value = { password: fakeChars(14, 9), x_config: { OPENAI_API_KEY: fakeChars(40, 10), api_tokens: [fakeChars(30, 11)] }, token_count: 12345, tokenizer: "whitespace" };
    const result = redactSecrets(value);
    expect(result.value).toEqual({
      password: "[redacted:password]",
      x_config: { OPENAI_API_KEY: "[redacted:api-key]", api_tokens: ["[redacted:token]"] },
      token_count: 12345,
      tokenizer: "whitespace",
    });
    expect(redactSecrets(result.value).value).toEqual(result.value);
  });

  it("returns the same object when there is nothing to redact, and keeps __proto__ an own key", () => {
    const plain = { summary: "nothing here", commands_run: ["npm test"], nested: { list: [1, "two", null] } };
    expect(redactSecrets(plain).value).toBe(plain);
    expect(redactSecrets(plain).count).toBe(0);
    const hostile = JSON.parse(`{"__proto__": {"token": "${fakeChars(30, 12)}"}, "summary": "x"}`) as Record<string, unknown>;
    const result = redactSecrets(hostile).value as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.hasOwn(result, "__proto__")).toBe(true);
    expect(JSON.stringify(result)).toContain("[redacted:token]");
    expect(({} as Record<string, unknown>).token).toBeUndefined();
  });
});

describe("idempotency (fast-check)", () => {
  const secret = fc.constantFrom(...fakeSecrets(1), ...fakeSecrets(5)).map((item) => item.text);
  // Text that sits next to secrets and could join them: token characters, separators, keywords, placeholders.
  const piece = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.string({ unit: fc.constantFrom(..."aA0_-.=:/@[]\"' \nxkK"), maxLength: 16 }),
    fc.constantFrom("password=", "token: ", "api_key=", "Bearer ", "https://u:", "@host", "[redacted:jwt]", "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "eyJ", "ghp_", "sk-", "AKIA", "xoxb-"),
    fc.nat().map((n) => fakeChars(8 + (n % 60), n)),
  );
  const text = fc.array(fc.oneof(piece, secret), { maxLength: 10 }).map((parts) => parts.join(""));

  it("redacting twice equals redacting once, for strings with embedded secrets", () => {
    fc.assert(
      fc.property(text, (value) => {
        const once = redactString(value);
        expect(redactString(once)).toBe(once);
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it("redacting twice equals redacting once, for JSON values", () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: "small" }, text, fc.integer(), tie("object"), tie("array")),
      object: fc.dictionary(fc.constantFrom("summary", "password", "api_key", "token", "command", "x_env", "detail"), tie("value"), { maxKeys: 4 }),
      array: fc.array(tie("value"), { maxLength: 4 }),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        const once = redactSecrets(value);
        const twice = redactSecrets(once.value);
        expect(twice.value).toEqual(once.value);
        expect(twice.count).toBe(0);
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });

  it("every embedded secret is gone after one pass", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 8 }), { minLength: 2, maxLength: 2 }), fc.constantFrom(...SECRETS), ([before, after], item) => {
        // Separated by a space, as a secret in a sentence or an argv string is.
        const redacted = redactString(`${before} ${item.text} ${after}`);
        expect(redacted).not.toContain(item.secret);
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });
});

describe("the patterns' prefilters (minLength, needs) skip only text without a match", () => {
  const corpusTexts = [1, 2, 3, 5, 17].flatMap((seed) => fakeSecrets(seed).map((item) => item.text));
  const unfiltered = SECRET_PATTERNS.map(({ kind, regex, replace }) => ({ kind, regex, replace }));
  // The prefilter's own view of a string: what redactString checks before a pattern's scan.
  const allowed = (pattern: (typeof SECRET_PATTERNS)[number], text: string) =>
    text.length >= (pattern.minLength ?? 0) && (!pattern.needs || pattern.needs.some((literal) => (pattern.regex.ignoreCase ? text.toLowerCase() : text).includes(literal)));

  it("every match of every pattern in the corpus passes its pattern's prefilter", () => {
    const failures: string[] = [];
    let matches = 0;
    for (const pattern of SECRET_PATTERNS) {
      for (const text of corpusTexts) {
        for (const match of text.matchAll(new RegExp(pattern.regex.source, pattern.regex.flags))) {
          matches++;
          if (!allowed(pattern, match[0])) failures.push(`${pattern.kind}: ${JSON.stringify(match[0].slice(0, 60))}`);
        }
      }
    }
    expect(matches).toBeGreaterThan(200);
    expect(failures).toEqual([]);
  });

  it("redacts the corpus and fuzzed text exactly as the patterns without prefilters do", () => {
    for (const text of corpusTexts) expect(redactString(text)).toBe(redactString(text, undefined, unfiltered));
    const near = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: fc.constantFrom(..."aA0_-.=:/@+~QS \nxkKp"), maxLength: 80 }),
      fc.constantFrom(...corpusTexts),
      fc.nat().map((n) => fakeChars(20 + (n % 120), n)),
    );
    fc.assert(
      fc.property(fc.array(near, { maxLength: 6 }), (parts) => {
        const value = parts.join(" ");
        expect(redactString(value)).toBe(redactString(value, undefined, unfiltered));
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });
});

describe("hostile input stays linear", () => {
  const MIB = 1024 * 1024;
  const hostile: [string, (bytes: number) => string][] = [
    ["jwt starts", (n) => "eyJ-".repeat(n / 4)],
    ["jwt dots", (n) => "eyJaaaaaaaaaaaa.".repeat(n / 16)],
    ["pem begins without an end", (n) => "-----BEGIN PRIVATE KEY-----".repeat(n / 27)],
    ["assignments", (n) => "token=".repeat(n / 6)],
    ["keywords without values", (n) => "password ".repeat(n / 9)],
    ["url schemes", (n) => "a://b:".repeat(n / 6)],
    ["url users", (n) => `a://${"b".repeat(n)}`],
    ["provider prefixes", (n) => "sk-".repeat(n / 3)],
    ["bearer", (n) => "Bearer ".repeat(n / 7)],
    ["slack", (n) => "xoxb-".repeat(n / 5)],
    ["aws", (n) => "AKIA".repeat(n / 4)],
    ["github", (n) => `ghp_${"a".repeat(n)}_`],
    ["one long run", (n) => "a".repeat(n)],
    ["spaces", (n) => " ".repeat(n)],
  ];
  /** The least CPU time of a few runs: another process on the machine does not count, only this one's work. */
  const leastCpuMs = (runs: number, work: () => void) =>
    Math.min(
      ...Array.from({ length: runs }, () => {
        const started = process.cpuUsage();
        work();
        const used = process.cpuUsage(started);
        return (used.user + used.system) / 1000;
      }),
    );

  // A ratio of CPU time, not a time limit (which flakes on a loaded machine): 16 times the input
  // takes about 16 times as long when the patterns are linear, 256 times when one backtracks
  // quadratically. The redaction cost itself is measured by npm run bench:redact.
  it.each(hostile)("redacts %s in time linear in its length (1 MiB against 64 KiB)", (_name, make) => {
    const small = make(MIB / 16);
    const large = make(MIB);
    const smallMs = Math.max(leastCpuMs(3, () => redactString(small)), 1);
    // Two timed runs of the large input (CPU time: another process does not inflate either); the first's output is checked below.
    let once = "";
    const largeMs = leastCpuMs(2, () => (once = redactString(large)));
    expect(largeMs / smallMs, `${largeMs.toFixed(1)} ms of CPU for 1 MiB, ${smallMs.toFixed(2)} ms for 64 KiB`).toBeLessThan(100);
    expect(redactString(once)).toBe(once);
  });
});

describe("the second hardening round's corpus (issue 18)", () => {
  const corpus = [1, 2, 3].flatMap((seed) => fakeSecrets(seed));

  it("holds over 100 secrets of over 40 kinds, made at run time, and none survives in a value", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(100);
    expect(new Set(corpus.map((item) => item.label)).size).toBeGreaterThanOrEqual(40);
    const leaks = corpus.filter((item) => redactString(item.text).includes(item.secret));
    expect(leaks.map((item) => `${item.kind}: ${item.text.slice(0, 40)}`)).toEqual([]);
  });

  it("none survives as an object key either, and two keys redacted alike stay two keys", () => {
    const record = Object.fromEntries(corpus.map((item, index) => [item.text, index]));
    const { value, count } = redactSecrets({ tokens: record });
    const text = JSON.stringify(value);
    expect(corpus.filter((item) => text.includes(item.secret)).map((item) => item.kind)).toEqual([]);
    expect(Object.keys((value as { tokens: Record<string, number> }).tokens)).toHaveLength(corpus.length);
    expect(count).toBeGreaterThanOrEqual(corpus.length);
    // Idempotent with renamed keys too.
    expect(redactSecrets(value).count).toBe(0);
  });
});
