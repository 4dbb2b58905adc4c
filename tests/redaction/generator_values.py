"""Random values of the right alphabet and length: provider token bodies, passwords, users, hosts, addresses."""

from __future__ import annotations

import base64
import os
import random
import secrets
import string

ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase
LOWER_ALNUM = LOWER + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def run_seed() -> int:
    """The seed of this test run: ``$REDACTION_SEED`` to replay one, else fresh."""
    return int(os.environ.get("REDACTION_SEED") or secrets.randbits(32))


def chars(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` uniformly random characters of ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(rng: random.Random, n_bytes: int, *, url: bool = False) -> str:
    """Base64 of ``n_bytes`` random bytes, as keys and signatures are printed."""
    raw = bytes(rng.getrandbits(8) for _ in range(n_bytes))
    return (base64.urlsafe_b64encode(raw) if url else base64.b64encode(raw)).decode()


_SYLLABLES = ("ka", "lo", "mi", "tra", "ven", "sol", "dor", "pi", "ne", "qua", "ri", "zen", "bel", "fo", "gar", "tu")


def password(rng: random.Random) -> str:
    """A human-chosen password: syllables, maybe a digit or two and a symbol (low entropy on purpose)."""
    word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(3, 5)))
    word = word.capitalize() if rng.random() < 0.5 else word
    return word + (str(rng.randint(1, 99)) if rng.random() < 0.7 else "") + (rng.choice("!#%*") if rng.random() < 0.3 else "")


def uuid(rng: random.Random) -> str:
    """A random UUID string."""
    h = chars(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def jwt(rng: random.Random) -> str:
    """A JSON Web Token with random claims and signature."""
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(f'{{"sub":"{chars(rng, LOWER_ALNUM, 10)}","iat":{rng.randint(10**9, 2 * 10**9)}}}'.encode())
    return f"{head}.{body.decode().rstrip('=')}.{b64(rng, 32, url=True).rstrip('=')}"


def user(rng: random.Random) -> str:
    """A cluster login name: ``jdoe``, ``alice.nguyen``, ``mkowalski2``."""
    first = rng.choice(("alice", "bruno", "chen", "dmitri", "elena", "farid", "greta", "hiro", "ines", "jonas", "kemal", "lucia"))
    last = rng.choice(("nguyen", "kowalski", "okafor", "schmidt", "tanaka", "garcia", "rossi", "ivanova", "berg", "moreau"))
    return rng.choice((f"{first[0]}{last}", f"{first}.{last}", f"{first}{last[:3]}", f"{first[0]}{last}{rng.randint(1, 9)}"))


_BIRDS = ("falcon", "kestrel", "osprey", "merlin", "harrier", "condor", "heron", "puffin", "plover", "avocet", "godwit", "dunlin")


def host_plain(rng: random.Random) -> str:
    """A host name without a digit: ``kestrel``, ``osprey-login``."""
    return rng.choice(_BIRDS) + rng.choice(("", "", "-gpu", "-login", "-compute", "ia"))


def host_digits(rng: random.Random) -> str:
    """A host name with digits: ``gpu-node-017``, ``nid001234``, ``dgx-a100-07``, ``kestrel12``."""
    return rng.choice(
        (
            f"gpu-node-{rng.randint(1, 999):03d}",
            f"nid{rng.randint(1, 9999):06d}",
            f"dgx-{rng.choice(('a100', 'h100'))}-{rng.randint(1, 64):02d}",
            f"{rng.choice(_BIRDS)}{rng.randint(10, 99)}",
            f"ip-10-{rng.randint(0, 255)}-{rng.randint(0, 255)}-{rng.randint(1, 254)}",
            f"hpc-{chars(rng, LOWER, 2)}{rng.randint(1, 400)}",
        )
    )


def any_host(rng: random.Random) -> str:
    """Half digit-less names, half with digits."""
    return host_plain(rng) if rng.random() < 0.5 else host_digits(rng)


def private_ip(rng: random.Random) -> str:
    """A private cluster address."""
    return rng.choice(
        (
            f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            f"172.{rng.randint(16, 31)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        )
    )
