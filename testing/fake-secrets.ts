/**
 * Fake secrets of every kind lib/contract/secrets.ts knows, for tests. Built from
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
  /** The placeholder's kind: what lib/contract/secrets.ts calls it (`[redacted:<kind>]`). */
  kind: string;
  /** The corpus kind: the shape of secret (one provider's token, one way of writing a password). */
  label: string;
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
    { kind: "aws-access-key-id", label: "aws-access-key-id", text: `export AWS_ACCESS_KEY_ID=${awsId}`, secret: awsId },
    { kind: "aws-access-key-id", label: "aws-session-key-id", text: `session key ${awsSession} expired`, secret: awsSession },
    { kind: "aws-secret-access-key", label: "aws-secret-labelled", text: `aws_secret_access_key = ${awsSecret}`, secret: awsSecret },
    { kind: "github-token", label: "github-ghp-in-url", text: `git push https://x:${"ghp_"}${s(36, 13)}@github.com/acme/app`, secret: `ghp_${s(36, 13)}` },
    { kind: "github-token", label: "github-gho", text: `GH_TOKEN gho_${s(36, 14)}`, secret: `gho_${s(36, 14)}` },
    { kind: "github-token", label: "github-ghs", text: `ghu_${s(36, 15)} ghs_${s(36, 16)} ghr_${s(36, 17)}`, secret: `ghs_${s(36, 16)}` },
    { kind: "github-token", label: "github-pat", text: `token github_pat_${s(22, 18)}_${s(59, 19)}`, secret: `github_pat_${s(22, 18)}_${s(59, 19)}` },
    { kind: "slack-token", label: "slack-xoxb", text: `SLACK_BOT=xoxb-${s(12, 20, "0123456789")}-${s(13, 21, "0123456789")}-${s(24, 22)}`, secret: `xoxb-${s(12, 20, "0123456789")}` },
    { kind: "slack-token", label: "slack-xapp", text: `xoxp-${s(12, 23, "0123456789")}-${s(24, 24)} and xapp-1-${s(11, 25)}-${s(30, 26)}`, secret: `xapp-1-${s(11, 25)}` },
    { kind: "slack-webhook", label: "slack-webhook", text: `curl -X POST https://hooks.slack.com/services/${slackHook} -d @msg.json`, secret: slackHook },
    { kind: "openai-key", label: "openai-project-key", text: `OPENAI_API_KEY=sk-proj-${s(48, 27)}`, secret: `sk-proj-${s(48, 27)}` },
    { kind: "openai-key", label: "openai-key-in-code", text: `client = OpenAI(api_key="sk-${s(48, 28)}")`, secret: `sk-${s(48, 28)}` },
    { kind: "anthropic-key", label: "anthropic-key", text: `x-api-key: sk-ant-api03-${s(86, 29)}-${s(8, 30)}AA`, secret: `sk-ant-api03-${s(86, 29)}` },
    { kind: "google-api-key", label: "google-api-key", text: `maps?key=AIza${s(35, 31)}&v=3`, secret: `AIza${s(35, 31)}` },
    { kind: "stripe-key", label: "stripe-sk-live", text: `STRIPE_SECRET=sk_live_${s(24, 32)}`, secret: `sk_live_${s(24, 32)}` },
    { kind: "stripe-key", label: "stripe-rk-live", text: `restricted rk_live_${s(24, 33)}`, secret: `rk_live_${s(24, 33)}` },
    { kind: "private-key", label: "pem-rsa", text: `key:\n${pem("RSA PRIVATE KEY", seed + 34)}\nend`, secret: fakeChars(64, seed + 34) },
    { kind: "private-key", label: "pem-openssh", text: pem("OPENSSH PRIVATE KEY", seed + 35), secret: fakeChars(64, seed + 36) },
    { kind: "private-key", label: "pem-cut-off", text: `cut off: -----BEGIN PRIVATE KEY-----\n${fakeChars(64, seed + 37)}`, secret: fakeChars(64, seed + 37) },
    { kind: "jwt", label: "jwt-in-cookie", text: `Cookie: session=${jwt}; Path=/`, secret: jwt },
    { kind: "url-password", label: "postgres-url", text: `DATABASE_URL=postgres://app:${urlPassword}@db.internal:5432/app`, secret: urlPassword },
    { kind: "url-password", label: "https-url-credentials", text: `https://deploy:${s(16, 38)}@registry.example.com/v2/`, secret: s(16, 38) },
    { kind: "password", label: "password-flag", text: `mysql -u root --password=${s(14, 39)} app`, secret: s(14, 39) },
    { kind: "api-key", label: "api-key-assignment", text: `API_KEY=${s(32, 40)}`, secret: s(32, 40) },
    { kind: "token", label: "token-in-json", text: `{"token": "${s(40, 41)}"}`, secret: s(40, 41) },
    { kind: "secret", label: "client-secret-yaml", text: `client_secret: ${s(30, 42)}`, secret: s(30, 42) },
    { kind: "baton-token", label: "baton-token", text: `BATON_TOKEN btn_${s(8, 43, "abcdefghijklmnopqrstuvwxyz0123456789")}_${s(32, 44)}`, secret: `_${s(32, 44)}` },
    { kind: "bearer-token", label: "authorization-bearer", text: `curl -H 'Authorization: Bearer ${s(40, 45)}' https://api.example.com`, secret: s(40, 45) },
    // The kinds the second hardening round found getting through .
    { kind: "password", label: "password-short-letters", text: `password=${s(6, 46, "abcdefghijklmnopqrstuvwxyz")}`, secret: s(6, 46, "abcdefghijklmnopqrstuvwxyz") },
    { kind: "password", label: "password-short-colon", text: `db password: ${s(5, 47, "abcdefghij")}9!`, secret: `${s(5, 47, "abcdefghij")}9!` },
    { kind: "password", label: "pgpassword", text: `PGPASSWORD=${s(10, 48)} psql -h db app`, secret: s(10, 48) },
    { kind: "password", label: "mysql-pwd", text: `MYSQL_PWD=${s(9, 49)} mysql app`, secret: s(9, 49) },
    { kind: "basic-credentials", label: "curl-u", text: `curl -u deploy:${s(12, 50)} https://ci.example.com/api`, secret: s(12, 50) },
    { kind: "authorization", label: "authorization-basic", text: `Authorization: Basic ${s(28, 51)}=`, secret: s(28, 51) },
    { kind: "authorization", label: "authorization-token", text: `-H "Authorization: token ${s(30, 52)}"`, secret: s(30, 52) },
    { kind: "openai-key", label: "sk-lower-case", text: `key sk-${s(40, 53, "abcdefghijklmnopqrstuvwxyz0123456789")}`, secret: `sk-${s(40, 53, "abcdefghijklmnopqrstuvwxyz0123456789")}` },
    { kind: "slack-token", label: "slack-xoxe-config", text: `xoxe.xoxp-1-${s(40, 54)}`, secret: s(40, 54) },
    { kind: "slack-token", label: "slack-xoxe-refresh", text: `refresh xoxe-1-${s(40, 55)}`, secret: s(40, 55) },
    { kind: "stripe-key", label: "stripe-whsec", text: `STRIPE_WEBHOOK_SECRET whsec_${s(32, 56)}`, secret: `whsec_${s(32, 56)}` },
    { kind: "stripe-key", label: "stripe-sk-test", text: `test key sk_test_${s(24, 57)}`, secret: `sk_test_${s(24, 57)}` },
    { kind: "aws-secret-access-key", label: "aws-secret-unlabelled", text: `the secret is ${s(18, 58)}/${s(10, 59)}+${s(10, 60)} (unlabelled)`, secret: `${s(18, 58)}/${s(10, 59)}+${s(10, 60)}` },
    { kind: "azure-key", label: "azure-account-key", text: `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${s(40, 61)}==;EndpointSuffix=core.windows.net`, secret: s(40, 61) },
    { kind: "secret", label: "camelcase-client-secret", text: `clientSecret: "${s(24, 62)}"`, secret: s(24, 62) },
    { kind: "token", label: "camelcase-access-token", text: `const accessToken = "${s(32, 63)}"`, secret: s(32, 63) },
    { kind: "url-password", label: "redis-url-password", text: `REDIS_URL=redis://:${s(16, 64)}@cache:6379/0`, secret: s(16, 64) },
    { kind: "private-key", label: "pem-body-only", text: `pasted without its header:\n${fakeChars(64, seed + 65, B64)}\n${fakeChars(64, seed + 66, B64)}\n${fakeChars(64, seed + 67, B64)}\n${fakeChars(20, seed + 68, B64)}==`, secret: fakeChars(64, seed + 66, B64) },
    { kind: "gitlab-token", label: "gitlab-pat", text: `GITLAB_TOKEN glpat-${s(20, 69)}`, secret: `glpat-${s(20, 69)}` },
    { kind: "npm-token", label: "npm-token", text: `//registry/:_authToken=npm_${s(36, 70)}`, secret: `npm_${s(36, 70)}` },
    { kind: "huggingface-token", label: "huggingface-token", text: `HF hf_${s(34, 71, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")}`, secret: `hf_${s(34, 71, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")}` },
    { kind: "sendgrid-key", label: "sendgrid-key", text: `SG.${s(22, 72)}.${s(43, 73)}`, secret: `SG.${s(22, 72)}.${s(43, 73)}` },
    { kind: "twilio-key", label: "twilio-api-key", text: `twilio api key SK${s(32, 74, "0123456789abcdef")}`, secret: `SK${s(32, 74, "0123456789abcdef")}` },
    { kind: "digitalocean-token", label: "digitalocean-token", text: `DO dop_v1_${s(64, 75, "0123456789abcdef")}`, secret: `dop_v1_${s(64, 75, "0123456789abcdef")}` },
    // Round three: more providers, and the ways of writing them the corpus test asked for.
    { kind: "discord-token", label: "discord-bot-token", text: `DISCORD_BOT=M${s(23, 76)}.${s(6, 77)}.${s(27, 78)}`, secret: `M${s(23, 76)}.${s(6, 77)}.${s(27, 78)}` },
    { kind: "discord-webhook", label: "discord-webhook", text: `post to https://discord.com/api/webhooks/${s(18, 79, DIGITS)}/${s(68, 80)}`, secret: s(68, 80) },
    { kind: "api-key", label: "datadog-api-key", text: `DD_API_KEY=${s(32, 81, HEX)} datadog-agent start`, secret: s(32, 81, HEX) },
    { kind: "api-key", label: "datadog-app-key", text: `DD_APP_KEY: ${s(40, 82, HEX)}`, secret: s(40, 82, HEX) },
    { kind: "shopify-token", label: "shopify-access-token", text: `X-Shopify-Access-Token: shpat_${s(32, 83, HEX)}`, secret: `shpat_${s(32, 83, HEX)}` },
    { kind: "shopify-token", label: "shopify-shared-secret", text: `shpss_${s(32, 84, HEX)} is the app secret`, secret: `shpss_${s(32, 84, HEX)}` },
    { kind: "mailgun-key", label: "mailgun-key", text: `curl -s --user 'api:key-${s(32, 85, HEX)}' https://api.mailgun.net/v3`, secret: `key-${s(32, 85, HEX)}` },
    { kind: "heroku-key", label: "heroku-hrku", text: `heroku auth:token shows HRKU-AA${s(58, 86)}`, secret: `HRKU-AA${s(58, 86)}` },
    { kind: "api-key", label: "heroku-api-key-uuid", text: `HEROKU_API_KEY=${uuid(seed * 101 + 87)}`, secret: uuid(seed * 101 + 87) },
    { kind: "token", label: "twilio-auth-token", text: `TWILIO_AUTH_TOKEN=${s(32, 88, HEX)}`, secret: s(32, 88, HEX) },
    { kind: "pypi-token", label: "pypi-token", text: `twine upload -p pypi-AgEIcHlwaS5vcmc${s(60, 89)}`, secret: `pypi-AgEIcHlwaS5vcmc${s(60, 89)}` },
    { kind: "linear-key", label: "linear-key", text: `LINEAR lin_api_${s(40, 90)}`, secret: `lin_api_${s(40, 90)}` },
    { kind: "grafana-token", label: "grafana-service-account", text: `grafana glsa_${s(32, 91)}_${s(8, 92, HEX)}`, secret: `glsa_${s(32, 91)}_${s(8, 92, HEX)}` },
    { kind: "databricks-token", label: "databricks-token", text: `databricks configure --token dapi${s(32, 93, HEX)}`, secret: `dapi${s(32, 93, HEX)}` },
    { kind: "postman-key", label: "postman-key", text: `postman PMAK-${s(24, 94, HEX)}-${s(34, 95, HEX)}`, secret: `PMAK-${s(24, 94, HEX)}-${s(34, 95, HEX)}` },
    { kind: "vault-token", label: "vault-token", text: `VAULT hvs.${s(90, 96)}`, secret: `hvs.${s(90, 96)}` },
    { kind: "doppler-token", label: "doppler-token", text: `doppler dp.st.prd.${s(40, 97)}`, secret: `dp.st.prd.${s(40, 97)}` },
    { kind: "groq-key", label: "groq-key", text: `groq gsk_${s(52, 98)}`, secret: `gsk_${s(52, 98)}` },
    { kind: "docker-token", label: "docker-hub-token", text: `docker login -p dckr_pat_${s(27, 99)}`, secret: `dckr_pat_${s(27, 99)}` },
    { kind: "telegram-token", label: "telegram-bot-token", text: `https://api.telegram.org/bot${s(10, 100, DIGITS)}:AA${s(33, 101)}/getMe`, secret: `AA${s(33, 101)}` },
    { kind: "age-key", label: "age-secret-key", text: `AGE-SECRET-KEY-1${s(58, 102, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")}`, secret: s(58, 102, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L") },
    { kind: "newrelic-key", label: "newrelic-user-key", text: `NEW_RELIC NRAK-${s(27, 103, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}`, secret: `NRAK-${s(27, 103, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}` },
    { kind: "sentry-token", label: "sentry-token", text: `SENTRY sntrys_${s(60, 104)}`, secret: `sntrys_${s(60, 104)}` },
    { kind: "azure-key", label: "azure-client-secret", text: `AZURE client secret ${s(3, 105)}8Q~${s(34, 106, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_~.-")}`, secret: s(34, 106, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_~.-") },
    { kind: "token", label: "cloudflare-api-token", text: `CLOUDFLARE_API_TOKEN=${s(40, 107)}`, secret: s(40, 107) },
    { kind: "password", label: "password-digitless", text: `login with password=${s(9, 108, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")}`, secret: s(9, 108, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") },
    { kind: "password", label: "password-yaml-quoted", text: `db:\n  password: "${s(11, 109)}"`, secret: s(11, 109) },
    { kind: "authorization", label: "authorization-header-object", text: `{"Authorization": "Basic ${s(24, 110)}="}`, secret: s(24, 110) },
    { kind: "api-key", label: "gcp-service-account-key-id", text: `"private_key_id": "${s(40, 111, HEX)}"`, secret: s(40, 111, HEX) },
    { kind: "url-password", label: "mongodb-srv-url", text: `MONGO_URL=mongodb+srv://svc:${s(18, 112)}@cluster0.mongodb.net/app`, secret: s(18, 112) },
    { kind: "url-password", label: "amqp-url-password", text: `amqp://guest:${s(12, 113)}@rabbit:5672/`, secret: s(12, 113) },
    { kind: "private-key", label: "pem-ec-in-json", text: JSON.stringify({ private_key: pem("EC PRIVATE KEY", seed + 114) }), secret: fakeChars(64, seed + 115) },
  ];
  return items;
}

const HEX = "0123456789abcdef";
const DIGITS = "0123456789";

/** A UUID (v4 layout) from the seed. */
function uuid(seed: number): string {
  const h = fakeChars(32, seed, HEX);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
}
