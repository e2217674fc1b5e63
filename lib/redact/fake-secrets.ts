/**
 * Fake secrets of every kind lib/redact/secrets.ts knows, for tests. Built from
 * parts at run time (no literal token sits in the source for a scanner to flag);
 * the random parts are deterministic, so a failure replays.
 */

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `length` characters of `alphabet`, the same for the same seed, always with a digit, a lower- and an upper-case letter when the alphabet has them. */
export function fakeChars(length: number, seed: number, alphabet = ALNUM): string {
  let state = seed >>> 0 || 1;
  let out = "";
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    out += alphabet[(state >>> 8) % alphabet.length];
  }
  if (alphabet === ALNUM && length >= 3) out = `Q7k${out.slice(3)}`;
  return out;
}

export interface FakeSecret {
  kind: string;
  /** The text as an agent might write it. */
  text: string;
  /** The part that must not survive redaction. */
  secret: string;
}

const pem = (label: string, seed: number) =>
  [`-----BEGIN ${label}-----`, fakeChars(64, seed), fakeChars(64, seed + 1), `${fakeChars(20, seed + 2)}==`, `-----END ${label}-----`].join("\n");

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

export function fakeSecrets(seed = 1): FakeSecret[] {
  const s = (n: number, offset: number, alphabet?: string) => fakeChars(n, seed * 101 + offset, alphabet);
  const awsId = `AKIA${s(16, 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`;
  const awsSession = `ASIA${s(16, 2, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`;
  const awsSecret = `${s(18, 3)}/${s(10, 4)}+${s(10, 5)}`;
  const jwt = `eyJ${s(30, 6)}.eyJ${s(40, 7)}.${s(43, 8)}`;
  const slackHook = `T${s(8, 9)}/B${s(8, 10)}/${s(24, 11)}`;
  const urlPassword = `${s(14, 12)}`;
  const items: FakeSecret[] = [
    { kind: "aws-access-key-id", text: `export AWS_ACCESS_KEY_ID=${awsId}`, secret: awsId },
    { kind: "aws-access-key-id", text: `session key ${awsSession} expired`, secret: awsSession },
    { kind: "aws-secret-access-key", text: `aws_secret_access_key = ${awsSecret}`, secret: awsSecret },
    { kind: "github-token", text: `git push https://x:${"ghp_"}${s(36, 13)}@github.com/acme/app`, secret: `ghp_${s(36, 13)}` },
    { kind: "github-token", text: `GH_TOKEN gho_${s(36, 14)}`, secret: `gho_${s(36, 14)}` },
    { kind: "github-token", text: `ghu_${s(36, 15)} ghs_${s(36, 16)} ghr_${s(36, 17)}`, secret: `ghs_${s(36, 16)}` },
    { kind: "github-token", text: `token github_pat_${s(22, 18)}_${s(59, 19)}`, secret: `github_pat_${s(22, 18)}_${s(59, 19)}` },
    { kind: "slack-token", text: `SLACK_BOT=xoxb-${s(12, 20, "0123456789")}-${s(13, 21, "0123456789")}-${s(24, 22)}`, secret: `xoxb-${s(12, 20, "0123456789")}` },
    { kind: "slack-token", text: `xoxp-${s(12, 23, "0123456789")}-${s(24, 24)} and xapp-1-${s(11, 25)}-${s(30, 26)}`, secret: `xapp-1-${s(11, 25)}` },
    { kind: "slack-webhook", text: `curl -X POST https://hooks.slack.com/services/${slackHook} -d @msg.json`, secret: slackHook },
    { kind: "openai-key", text: `OPENAI_API_KEY=sk-proj-${s(48, 27)}`, secret: `sk-proj-${s(48, 27)}` },
    { kind: "openai-key", text: `client = OpenAI(api_key="sk-${s(48, 28)}")`, secret: `sk-${s(48, 28)}` },
    { kind: "anthropic-key", text: `x-api-key: sk-ant-api03-${s(86, 29)}-${s(8, 30)}AA`, secret: `sk-ant-api03-${s(86, 29)}` },
    { kind: "google-api-key", text: `maps?key=AIza${s(35, 31)}&v=3`, secret: `AIza${s(35, 31)}` },
    { kind: "stripe-key", text: `STRIPE_SECRET=sk_live_${s(24, 32)}`, secret: `sk_live_${s(24, 32)}` },
    { kind: "stripe-key", text: `restricted rk_live_${s(24, 33)}`, secret: `rk_live_${s(24, 33)}` },
    { kind: "private-key", text: `key:\n${pem("RSA PRIVATE KEY", seed + 34)}\nend`, secret: fakeChars(64, seed + 34) },
    { kind: "private-key", text: pem("OPENSSH PRIVATE KEY", seed + 35), secret: fakeChars(64, seed + 36) },
    { kind: "private-key", text: `cut off: -----BEGIN PRIVATE KEY-----\n${fakeChars(64, seed + 37)}`, secret: fakeChars(64, seed + 37) },
    { kind: "jwt", text: `Cookie: session=${jwt}; Path=/`, secret: jwt },
    { kind: "url-password", text: `DATABASE_URL=postgres://app:${urlPassword}@db.internal:5432/app`, secret: urlPassword },
    { kind: "url-password", text: `https://deploy:${s(16, 38)}@registry.example.com/v2/`, secret: s(16, 38) },
    { kind: "password", text: `mysql -u root --password=${s(14, 39)} app`, secret: s(14, 39) },
    { kind: "api-key", text: `API_KEY=${s(32, 40)}`, secret: s(32, 40) },
    { kind: "token", text: `{"token": "${s(40, 41)}"}`, secret: s(40, 41) },
    { kind: "secret", text: `client_secret: ${s(30, 42)}`, secret: s(30, 42) },
    { kind: "baton-token", text: `BATON_TOKEN btn_${s(8, 43, "abcdefghijklmnopqrstuvwxyz0123456789")}_${s(32, 44)}`, secret: `_${s(32, 44)}` },
    { kind: "bearer-token", text: `curl -H 'Authorization: Bearer ${s(40, 45)}' https://api.example.com`, secret: s(40, 45) },
    // The kinds a second hardening round found getting through.
    { kind: "password", text: `password=${s(6, 46, "abcdefghijklmnopqrstuvwxyz")}`, secret: s(6, 46, "abcdefghijklmnopqrstuvwxyz") },
    { kind: "password", text: `db password: ${s(5, 47, "abcdefghij")}9!`, secret: `${s(5, 47, "abcdefghij")}9!` },
    { kind: "password", text: `PGPASSWORD=${s(10, 48)} psql -h db app`, secret: s(10, 48) },
    { kind: "password", text: `MYSQL_PWD=${s(9, 49)} mysql app`, secret: s(9, 49) },
    { kind: "basic-credentials", text: `curl -u deploy:${s(12, 50)} https://ci.example.com/api`, secret: s(12, 50) },
    { kind: "authorization", text: `Authorization: Basic ${s(28, 51)}=`, secret: s(28, 51) },
    { kind: "authorization", text: `-H "Authorization: token ${s(30, 52)}"`, secret: s(30, 52) },
    { kind: "openai-key", text: `key sk-${s(40, 53, "abcdefghijklmnopqrstuvwxyz0123456789")}`, secret: `sk-${s(40, 53, "abcdefghijklmnopqrstuvwxyz0123456789")}` },
    { kind: "slack-token", text: `xoxe.xoxp-1-${s(40, 54)}`, secret: s(40, 54) },
    { kind: "slack-token", text: `refresh xoxe-1-${s(40, 55)}`, secret: s(40, 55) },
    { kind: "stripe-key", text: `STRIPE_WEBHOOK_SECRET whsec_${s(32, 56)}`, secret: `whsec_${s(32, 56)}` },
    { kind: "stripe-key", text: `test key sk_test_${s(24, 57)}`, secret: `sk_test_${s(24, 57)}` },
    { kind: "aws-secret-access-key", text: `the secret is ${s(18, 58)}/${s(10, 59)}+${s(10, 60)} (unlabelled)`, secret: `${s(18, 58)}/${s(10, 59)}+${s(10, 60)}` },
    { kind: "azure-key", text: `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${s(40, 61)}==;EndpointSuffix=core.windows.net`, secret: s(40, 61) },
    { kind: "secret", text: `clientSecret: "${s(24, 62)}"`, secret: s(24, 62) },
    { kind: "token", text: `const accessToken = "${s(32, 63)}"`, secret: s(32, 63) },
    { kind: "url-password", text: `REDIS_URL=redis://:${s(16, 64)}@cache:6379/0`, secret: s(16, 64) },
    { kind: "private-key", text: `pasted without its header:\n${fakeChars(64, seed + 65, B64)}\n${fakeChars(64, seed + 66, B64)}\n${fakeChars(64, seed + 67, B64)}\n${fakeChars(20, seed + 68, B64)}==`, secret: fakeChars(64, seed + 66, B64) },
    { kind: "gitlab-token", text: `GITLAB_TOKEN glpat-${s(20, 69)}`, secret: `glpat-${s(20, 69)}` },
    { kind: "npm-token", text: `//registry/:_authToken=npm_${s(36, 70)}`, secret: `npm_${s(36, 70)}` },
    { kind: "huggingface-token", text: `HF hf_${s(34, 71, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")}`, secret: `hf_${s(34, 71, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")}` },
    { kind: "sendgrid-key", text: `SG.${s(22, 72)}.${s(43, 73)}`, secret: `SG.${s(22, 72)}.${s(43, 73)}` },
    { kind: "twilio-key", text: `twilio api key SK${s(32, 74, "0123456789abcdef")}`, secret: `SK${s(32, 74, "0123456789abcdef")}` },
    { kind: "digitalocean-token", text: `DO dop_v1_${s(64, 75, "0123456789abcdef")}`, secret: `dop_v1_${s(64, 75, "0123456789abcdef")}` },
  ];
  return items;
}
