"""Fresh secrets and identifying values in the shapes training logs really hold, plus lines to keep.

Every draw is new (``random.Random(seed)``, one seed per test run, printed so a failure can
be replayed with ``REDACTION_SEED``): provider tokens in their real alphabet and length,
placed in a realistic line, behind one of the launcher prefixes of :data:`PREFIXES`. A case
is a whole multi-line text, because that is what ``diagnose redact`` masks
(``Redactor().redact_text``); multi-line shapes (PEM keys, Kubernetes env entries, YAML
lists) carry the prefix on every line.

    cases = secret_cases(random.Random(7))   # [Case(kind, shape, prefix, text, values)]
    keep = keep_lines(random.Random(7), PREFIXES)  # lines that must come through unchanged
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import quote

from tests.redaction.generator_keep import KEEP, keep_lines
from tests.redaction.generator_values import (
    ALNUM,
    B64,
    HEX,
    LOWER,
    LOWER_ALNUM,
    URLSAFE,
    any_host,
    b64,
    chars,
    host_digits,
    host_plain,
    jwt,
    password,
    private_ip,
    run_seed,
    user,
    uuid,
)

__all__ = ["IDENT_SHAPES", "PREFIXES", "SECRET_SHAPES", "Case", "Figures", "keep_lines", "measure", "run_seed"]


class Case(NamedTuple):
    """One text to mask; every string in ``values`` must be gone from the masked text."""

    kind: str  # "secret" or "ident"
    shape: str
    prefix: str
    text: str
    values: tuple[str, ...]


# Launcher prefixes: each takes the rank and the generator and returns the line's prefix.
PREFIXES: dict[str, Callable[[int, random.Random], str]] = {
    "plain": lambda r, rng: "",
    "torchrun": lambda r, rng: f"[rank{r}]:",
    "torchrun-tee": lambda r, rng: f"[default{r}]:",
    "srun-label": lambda r, rng: f"{r:3d}: ",
    "mpirun": lambda r, rng: f"[1,{r}]<stdout>:",
    "kubectl": lambda r, rng: f"2024-05-01T12:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 10**9 - 1):09d}Z ",
    "logging": lambda r, rng: f"2024-05-01 12:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d},{rng.randint(0, 999):03d} - INFO - ",
    "glog": lambda r, rng: (
        f"I1202 12:00:{rng.randint(0, 59):02d}.{rng.randint(0, 999999):06d} {rng.randint(100, 99999)} train.py:{rng.randint(1, 999)}] "
    ),
}

Shape = Callable[[random.Random], tuple[list[str], tuple[str, ...]]]
SECRET_SHAPES: dict[str, Shape] = {}
IDENT_SHAPES: dict[str, Shape] = {}


def secret(name: str) -> Callable[[Shape], Shape]:
    """Register a secret shape: a function returning (lines, secrets)."""

    def register(fn: Shape) -> Shape:
        SECRET_SHAPES[name] = fn
        return fn

    return register


def ident(name: str) -> Callable[[Shape], Shape]:
    """Register an identifying-value shape: a function returning (lines, values)."""

    def register(fn: Shape) -> Shape:
        IDENT_SHAPES[name] = fn
        return fn

    return register


def one(line: str, *values: str) -> tuple[list[str], tuple[str, ...]]:
    """A one-line shape."""
    return [line], values


# ---- provider tokens -------------------------------------------------------------------------

secret("hf env")(lambda rng: one(f"export HF_TOKEN=hf_{(t := chars(rng, ALNUM, 34))}", f"hf_{t}"))
secret("hf cli")(lambda rng: one(f"+ huggingface-cli login --token hf_{(t := chars(rng, ALNUM, 34))} --add-to-git-credential", f"hf_{t}"))
secret("openai")(lambda rng: one(f"OPENAI_API_KEY=sk-{(t := chars(rng, ALNUM, 48))}", f"sk-{t}"))
secret("openai project")(lambda rng: one(f'openai.api_key = "sk-proj-{(t := chars(rng, URLSAFE, 120))}"', f"sk-proj-{t}"))
secret("anthropic")(
    lambda rng: one(f"client = Anthropic(api_key='sk-ant-api03-{(t := chars(rng, URLSAFE, 93))}AA')", f"sk-ant-api03-{t}AA")
)
secret("github classic")(
    lambda rng: one(f"remote: https://x-access-token:ghp_{(t := chars(rng, ALNUM, 36))}@github.com/org/repo.git", f"ghp_{t}")
)
secret("github fine-grained")(
    lambda rng: one(f"GITHUB_TOKEN: github_pat_{(t := chars(rng, ALNUM, 22) + '_' + chars(rng, ALNUM, 59))}", f"github_pat_{t}")
)
secret("slack bot")(
    lambda rng: one(
        f"notify: using xoxb-{(t := chars(rng, string.digits, 12) + '-' + chars(rng, string.digits, 13) + '-' + chars(rng, ALNUM, 24))}",
        f"xoxb-{t}",
    )
)
secret("gitlab")(lambda rng: one(f"CI_JOB_TOKEN glpat-{(t := chars(rng, URLSAFE, 20))}", f"glpat-{t}"))
secret("google api key")(lambda rng: one(f"maps key AIza{(t := chars(rng, URLSAFE, 35))} loaded", f"AIza{t}"))
secret("aws key id =")(lambda rng: one(f"aws_access_key_id = AKIA{(t := chars(rng, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16))}", f"AKIA{t}"))
secret("aws key id space")(
    lambda rng: one(f"aws_access_key_id AKIA{(t := chars(rng, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16))}", f"AKIA{t}")
)
secret("aws secret")(lambda rng: one(f"aws_secret_access_key = {(t := chars(rng, B64, 40))}", t))
secret("aws secret env")(lambda rng: one(f"AWS_SECRET_ACCESS_KEY={(t := chars(rng, B64, 40))}", t))
secret("gcp private_key_id")(lambda rng: one(f'  "private_key_id": "{(t := chars(rng, HEX, 40))}",', t))
secret("gcp private_key json")(
    lambda rng: one(
        f'  "private_key": "-----BEGIN PRIVATE KEY-----\\n{(t := b64(rng, 48))}\\n{b64(rng, 48)}\\n-----END PRIVATE KEY-----\\n",', t
    )
)
secret("wandb env")(lambda rng: one(f"WANDB_API_KEY={(t := chars(rng, HEX, 40))}", t))
secret("wandb login")(lambda rng: one(f"+ wandb login {(t := chars(rng, HEX, 40))}", t))
secret("jwt")(lambda rng: one(f"refreshing session with {(t := jwt(rng))}", t))
secret("url basic auth")(
    lambda rng: one(
        f"MLFLOW_TRACKING_URI=https://{user(rng)}:{(t := password(rng) + chars(rng, ALNUM, 4))}@mlflow.{chars(rng, LOWER, 5)}.internal", t
    )
)
secret("bearer")(lambda rng: one(f"Authorization: Bearer {(t := chars(rng, URLSAFE, 40))}", t))
secret("basic header")(
    lambda rng: one(f"Authorization: Basic {(t := base64.b64encode(f'{user(rng)}:{password(rng)}'.encode()).decode())}", t)
)
secret("database url")(lambda rng: one(f"DATABASE_URL=postgresql://{user(rng)}:{(t := password(rng))}@db:5432/runs", t))


@secret("pem key")
def _pem(rng: random.Random) -> tuple[list[str], tuple[str, ...]]:
    body = [b64(rng, 48) for _ in range(rng.randint(3, 6))] + [b64(rng, rng.randint(10, 40))]
    kind = rng.choice(("PRIVATE KEY", "RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"))
    return [f"-----BEGIN {kind}-----", *body, f"-----END {kind}-----"], tuple(body)


# ---- signed URLs, encoded secrets, cookies, HTTP dumps ---------------------------------------

secret("azure sas")(
    lambda rng: one(
        f"GET https://{chars(rng, LOWER, 10)}.blob.core.windows.net/ckpt/step_100.pt?sv=2022-11-02&ss=b&srt=o&se=2024-06-01T00%3A00%3A00Z"
        f"&sp=r&sig={(t := quote(b64(rng, 32), safe=''))} 403",
        t,
    )
)
secret("gcs v2 signature")(
    lambda rng: one(
        f"https://storage.googleapis.com/{chars(rng, LOWER, 8)}/data.tar?GoogleAccessId=sa@proj.iam.gserviceaccount.com"
        f"&Expires=1714567890&Signature={(t := quote(b64(rng, 128), safe=''))}",
        t,
    )
)
secret("gcs v4 signature")(
    lambda rng: one(
        f"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature={(t := chars(rng, HEX, 256))}", t
    )
)
secret("s3 presigned")(
    lambda rng: one(f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={(t := chars(rng, HEX, 64))}", t)
)
secret("azure conn string")(
    lambda rng: one(
        f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName={chars(rng, LOWER, 8)};"
        f"AccountKey={(t := b64(rng, 64))};EndpointSuffix=core.windows.net",
        t,
    )
)
secret("azure conn string urlencoded")(
    lambda rng: one(
        f"redirect: conn=DefaultEndpointsProtocol%3Dhttps%3BAccountName%3D{chars(rng, LOWER, 8)}"
        f"%3BAccountKey%3D{(t := quote(b64(rng, 64), safe=''))}%3B",
        t,
    )
)
secret("token urlencoded")(
    lambda rng: one(f"GET /login?next=https%3A%2F%2Fapp%2Fcb%3Ftoken%3D{(t := chars(rng, ALNUM, 32))}%26x%3D1 302", t)
)
secret("cookie")(
    lambda rng: one(
        f"{rng.choice(('Cookie', 'cookie', 'COOKIE'))}: {rng.choice(('theme=dark; ', '', '_ga=GA1.2.3; '))}"
        f"{rng.choice(('sessionid', 'JSESSIONID', 'connect.sid', '_session', 'auth'))}={(t := chars(rng, LOWER_ALNUM, 32))};"
        f" csrftoken={chars(rng, ALNUM, 32)}",
        t,
    )
)
secret("set-cookie")(lambda rng: one(f"header: Set-Cookie: session={(t := chars(rng, URLSAFE, 40))}; Path=/; HttpOnly", t))
secret("http dump basic")(
    lambda rng: one(
        f"send: b'GET /api/2.0/runs HTTP/1.1\\r\\nHost: mlflow\\r\\nAuthorization: Basic "
        f"{(t := base64.b64encode(f'{user(rng)}:{password(rng)}'.encode()).decode())}\\r\\n\\r\\n'",
        t,
    )
)
secret("http dump cookie")(
    lambda rng: one(f"send: b'POST /upload HTTP/1.1\\r\\nCookie: auth_session={(t := chars(rng, ALNUM, 28))}\\r\\n'", t)
)


def _secret_data(rng: random.Random) -> list[tuple[str, str]]:
    """A Kubernetes Secret's ``data:`` entries: any key names (not only credential-sounding ones), base64 values."""
    names = rng.sample(
        ("password", "username", "config.json", "ca.crt", "endpoint", "db-url", "other", "tls.key", "region"), rng.randint(1, 8)
    )
    return [(name, base64.b64encode(rng.randbytes(rng.randint(8, 40))).decode()) for name in names]


# ---- key and value on different lines -------------------------------------------------------

secret("k8s env")(
    lambda rng: (
        [
            f"    - name: {rng.choice(('WANDB_API_KEY', 'HF_TOKEN', 'DB_PASSWORD', 'API_SECRET', rng.choice(_VENDORS) + '_KEY'))}",
            f"      value: {rng.choice(('', chr(34), chr(39)))}"
            f"{(t := rng.choice((chars(rng, HEX, 40), password(rng), chars(rng, ALNUM, 24))))}",
        ],
        (t,),
    )
)
secret("k8s secret data")(
    lambda rng: (
        (["data:", *(f"  {name}: {value}" for name, value in pairs)], tuple(value for _, value in pairs))
        if (pairs := _secret_data(rng))
        else ([], ())
    )
)
secret("yaml credentials list")(lambda rng: (["credentials:", f"  - {(t := chars(rng, ALNUM, rng.randint(20, 40)))}"], (t,)))
secret("escaped json")(lambda rng: one(f'{{"config": "{{\\"api_key\\": \\"{(t := chars(rng, ALNUM, 32))}\\", \\"lr\\": 0.001}}"}}', t))
secret("yaml password")(lambda rng: one(f"  password: {(t := password(rng))}", t))

# ---- passwords given as flags -----------------------------------------------------------------

secret("mysql -p")(
    lambda rng: one(
        rng.choice(
            (
                f"+ mysql -h db -u train -p{(t := password(rng))} -e 'select 1'",
                f"+ mysqldump --user=train -p{t} runs > runs.sql",
                f"mysql -uroot -p'{t}' metrics",
            )
        ),
        t,
    )
)
secret("sshpass")(lambda rng: one(f"+ sshpass -p '{(t := password(rng))}' rsync -a ckpt/ backup:/ckpt/", t))
secret("redis-cli")(lambda rng: one(f"+ redis-cli -h cache -a {(t := password(rng))} ping", t))
secret("curl -u")(lambda rng: one(f"+ curl -sf -u {user(rng)}:{(t := password(rng))} https://artifacts/api/upload", t))
secret("smbclient")(lambda rng: one(f"+ smbclient //fs/share -U {user(rng)}%{(t := password(rng))} -c ls", t))
secret("password flag")(lambda rng: one(f"+ python upload.py --password {(t := password(rng))} --bucket runs", t))

secret("registry login")(
    lambda rng: one(f"+ docker login -u {user(rng)} -p {(t := password(rng))} registry.{rng.choice(('acme.io', 'lab.internal'))}", t)
)
secret("netrc")(lambda rng: one(f"machine api.wandb.ai login {user(rng)} password {(t := password(rng))}", t))
secret("bare env name")(
    lambda rng: one(f"{rng.choice(('PGPASSWORD', 'PASSWORD', 'MYSQL_PWD', 'SECRET'))}={(t := password(rng))} psql -h db", t)
)
secret("underscore flag")(
    lambda rng: one(
        f"+ python train.py --{rng.choice(('hf_token', 'wandb-api-key', 'db_password'))} {(t := chars(rng, ALNUM, 20))} --bf16", t
    )
)


# ---- <VENDOR>_<KEYWORD> assignments, webhooks ----------------------------------------------------

_VENDORS = ("KAGGLE", "ROBOFLOW", "MAPBOX", "COMET", "NEPTUNE", "CLEARML", "REPLICATE", "COHERE", "PINECONE", "ZILLIZ", "ACME_INFRA")
_SUFFIXES = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASS", "PWD")


@secret("vendor assignment")
def _vendor(rng: random.Random) -> tuple[list[str], tuple[str, ...]]:
    name = f"{rng.choice(_VENDORS)}_{rng.choice(_SUFFIXES)}"
    value = rng.choice((chars(rng, HEX, 32), chars(rng, ALNUM, 20), password(rng), f"pk.{chars(rng, ALNUM, 60)}"))
    form = rng.choice(
        (
            f"{name}={value}",
            f"export {name}={value}",
            f'{name}="{value}"',
            f"{name}: {value}",
            f"{name} {value}",
            f"'{name}': '{value}'",
            f'"{name}": "{value}"',
        )
    )
    return [form], (value,)


secret("discord webhook")(
    lambda rng: one(f"alerts -> https://discord.com/api/webhooks/{rng.randint(10**17, 10**18)}/{(t := chars(rng, URLSAFE, 68))}", t)
)
secret("teams webhook")(
    lambda rng: one(
        f"TEAMS_URL=https://acme.webhook.office.com/webhookb2/{uuid(rng)}@{uuid(rng)}/"
        f"IncomingWebhook/{(t := chars(rng, HEX, 32))}/{uuid(rng)}",
        t,
    )
)
secret("telegram bot")(
    lambda rng: one(f"POST https://api.telegram.org/bot{rng.randint(10**8, 10**10)}:{(t := chars(rng, URLSAFE, 35))}/sendMessage", t)
)
secret("slack webhook")(
    lambda rng: one(
        f"https://hooks.slack.com/services/T{chars(rng, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 10)}/"
        f"B{chars(rng, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 10)}/{(t := chars(rng, ALNUM, 24))}",
        t,
    )
)


# ---- identifying values -------------------------------------------------------------------------

ident("nccl prefix")(
    lambda rng: one(
        f"{(h := any_host(rng))}:{rng.randint(1000, 99999)}:{rng.randint(1000, 99999)} "
        f"[{rng.randint(0, 7)}] NCCL INFO Bootstrap : Using eth0:{(ip := private_ip(rng))}<0>",
        h,
        ip,
    )
)
ident("bracket host port")(
    lambda rng: one(
        "[W socket.cpp:663] [c10d] The client socket has failed to connect "
        f"to [{(h := any_host(rng))}]:29500 (errno: 22 - Invalid argument).",
        h,
    )
)
ident("hostname=")(lambda rng: one(f"hostname={(h := any_host(rng))} local_rank=3", h))
ident("rdzv endpoint")(
    lambda rng: one(f"+ torchrun --nnodes=4 --rdzv_backend=c10d --rdzv_endpoint={(h := any_host(rng))}:29400 train.py", h)
)
ident("MASTER_ADDR")(lambda rng: one(f"MASTER_ADDR={(h := any_host(rng))} MASTER_PORT=29500", h))
ident("USER=")(lambda rng: one(f"USER={(u := user(rng))}", u))
ident("LOGNAME=")(lambda rng: one(f"LOGNAME={(u := user(rng))}", u))
ident("id output")(
    lambda rng: one(f"uid=1000({(u := user(rng))}) gid=1000({(g := chars(rng, LOWER, 6) + '-lab')}) groups=1000({g}),27(sudo)", u, g)
)
ident("slurm time limit")(
    lambda rng: one(
        f"slurmstepd: error: *** JOB {rng.randint(10**5, 10**7)} "
        f"ON {(h := any_host(rng))} CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME LIMIT ***",
        h,
    )
)
ident("slurm cancelled by")(
    lambda rng: one(
        f"slurmstepd: error: *** STEP {rng.randint(10**5, 10**7)}.0 "
        f"ON {(h := any_host(rng))} CANCELLED AT 2024-05-01T12:00:00 *** by {(u := user(rng))}",
        h,
        u,
    )
)
ident("juelich scratch")(
    lambda rng: one(f"saving to /p/scratch/{chars(rng, LOWER, 6)}{rng.randint(1, 9)}/{(u := user(rng))}/ckpt/step_100", u)
)
ident("nersc homes")(lambda rng: one(f'  File "/global/homes/{(u := user(rng))[0]}/{u}/llm/train.py", line 42, in <module>', u))
ident("domain home")(lambda rng: one(f"cd /home/{rng.choice(('CORP', 'AD', 'EUROPE'))}/{(u := user(rng))}/runs", u))
ident("home path")(lambda rng: one(f'  File "/home/{(u := user(rng))}/src/train.py", line 7, in main', u))
ident("srun task")(lambda rng: one(f"srun: error: {(h := host_digits(rng))}: task 3: Exited with exit code 1", h))
ident("child failed host")(lambda rng: one(f"  host      : {(h := any_host(rng))}", h))
ident("fqdn")(
    lambda rng: one(f"connecting to {(h := host_digits(rng))}.cluster.{rng.choice(('internal', 'local', 'example.edu'))}:29500", h)
)
ident("ib ip")(lambda rng: one(f"NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:{(ip := private_ip(rng))}<0>", ip))
ident("email")(
    lambda rng: one(f"wandb: Currently logged in as: {(e := user(rng) + '@' + rng.choice(('acme.com', 'uni-x.edu', 'lab.org')))}", e)
)


@ident("deepspeed world_info")
def _world_info(rng: random.Random) -> tuple[list[str], tuple[str, ...]]:
    hosts = {any_host(rng): list(range(8)) for _ in range(rng.randint(1, 3))}
    encoded = base64.urlsafe_b64encode(str(hosts).replace("'", '"').encode()).decode()
    return [f"+ python -u -m deepspeed.launcher.launch --world_info={encoded} --master_port=29500 train.py"], (encoded,)


@ident("host taught, used before")
def _taught(rng: random.Random) -> tuple[list[str], tuple[str, ...]]:
    host = host_plain(rng)
    teach = rng.choice(
        (
            f"{host}:{rng.randint(1000, 9999)}:{rng.randint(1000, 9999)} [0] NCCL INFO cudaDriverVersion 12040",
            f"socket.gethostname() = {host}",
            f"rank 3 is running on host {host}",
            f"[rank3]: hostname: {host}",
        )
    )
    return [f"waiting for {host} to join the rendezvous", teach, f"ssh {host} nvidia-smi"], (host,)


def secret_cases(rng: random.Random, *, draws: int = 3) -> list[Case]:
    """Every secret shape behind every prefix, ``draws`` fresh draws each."""
    return _cases(rng, "secret", SECRET_SHAPES, draws)


def ident_cases(rng: random.Random, *, draws: int = 3) -> list[Case]:
    """Every identifying-value shape behind every prefix, ``draws`` fresh draws each."""
    return _cases(rng, "ident", IDENT_SHAPES, draws)


def _cases(rng: random.Random, kind: str, shapes: dict[str, Shape], draws: int) -> list[Case]:
    out = []
    for shape, make in shapes.items():
        for prefix_name, prefix in PREFIXES.items():
            for _ in range(draws):
                lines, values = make(rng)
                rank = rng.randint(0, 7)
                body = [prefix(rank, rng) + line for line in lines]
                before = prefix(rank, rng) + rng.choice(KEEP)(rng)
                after = prefix(rank, rng) + rng.choice(KEEP)(rng)
                out.append(Case(kind, shape, prefix_name, "\n".join([before, *body, after]), values))
    return out


class Figures(NamedTuple):
    """Share of secrets masked, of identifying values masked, of keep lines unchanged; and the misses."""

    secrets: float
    idents: float
    keep: float
    misses: list[tuple[str, str, str]]  # (kind or "keep", shape, masked text)


def measure(seed: int, *, draws: int = 3, keep: int = 480) -> Figures:
    """Mask every generated case with a fresh ``Redactor().redact_text``, as ``diagnose redact`` does."""
    from redaction import Redactor

    rng = random.Random(seed)
    misses: list[tuple[str, str, str]] = []
    shares = []
    for cases in (secret_cases(rng, draws=draws), ident_cases(rng, draws=draws)):
        total = found = 0
        for case in cases:
            masked = Redactor().redact_text(case.text)
            for value in case.values:
                total += 1
                if value in masked:
                    misses.append((case.kind, f"{case.shape} / {case.prefix}", masked))
                else:
                    found += 1
        shares.append(found / total)
    lines = keep_lines(rng, PREFIXES, n=keep)
    kept = 0
    for line in lines:
        masked = Redactor().redact_text(line)
        if masked == line:
            kept += 1
        else:
            misses.append(("keep", line, masked))
    return Figures(shares[0], shares[1], kept / len(lines), misses)
