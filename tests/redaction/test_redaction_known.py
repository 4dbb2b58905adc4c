"""Values masked once are masked wherever else they appear (the sweep of known values)."""

from __future__ import annotations

import pytest

from redaction import Redactor
from redaction.known import KnownValues


def test_when_a_user_is_known_from_a_home_path_then_other_paths_lose_it_too(redactor: Redactor) -> None:
    text = "\n".join(
        [
            '  File "/home/dfischer/.venvs/vit/bin/torchrun", line 8, in <module>',
            "[rank 0] s3 checkpoint target: s3://vit21k-runs/dfischer/vitl-0722",
            "scratch at /scratch/dfischer/ckpt; dfischer-old stays as it is",
        ]
    )
    assert redactor.redact_text(text).split("\n") == [
        '  File "/home/<USER_1>/.venvs/vit/bin/torchrun", line 8, in <module>',
        "[rank 0] s3 checkpoint target: s3://<BUCKET_1>/<USER_1>/vitl-0722",
        "scratch at /scratch/<USER_1>/ckpt; dfischer-old stays as it is",
    ]


def test_when_hosts_are_known_from_prefixes_then_a_host_list_earlier_in_the_block_is_masked(redactor: Redactor) -> None:
    text = "cmd = pdsh -S -f 1024 -w h100-sxm-141,h100-sxm-142 python train.py\nh100-sxm-141: ready\nh100-sxm-142: ready"
    assert redactor.redact_text(text).split("\n") == [
        "cmd = pdsh -S -f 1024 -w <HOST_1>,<HOST_2> python train.py",
        "<HOST_1>: ready",
        "<HOST_2>: ready",
    ]


def test_when_a_token_reappears_without_its_key_word_then_it_is_still_masked(redactor: Redactor) -> None:
    assert redactor.redact_line("DB_PASSWORD=Zq7vRk2mPw9x") == "DB_PASSWORD=<TOKEN_1>"
    assert redactor.redact_line("psql: auth failed for secret Zq7vRk2mPw9x.") == "psql: auth failed for secret <TOKEN_1>."


def test_a_url_user_is_not_swept_because_it_is_often_a_service_name(redactor: Redactor) -> None:
    line = "could not connect (url=postgres://mlflow:Tr41n!ngDB@db.internal:5432/mlflow)"
    assert redactor.redact_line(line) == "could not connect (url=postgres://<USER_1>:<PASSWORD_1>@<HOST_1>:5432/mlflow)"


@pytest.mark.parametrize("use_hyperscan", [True, False])
def test_known_values_match_whole_words_only(use_hyperscan: bool) -> None:
    known = KnownValues(use_hyperscan=use_hyperscan)
    known.add("USER", "alice")
    known.add("HOST", "node07")
    known.add("USER", "root")
    known.add("USER", "bob")
    data = b"alice alices NODE07 node070 root bob /x/alice/"
    swept = known.sweep(data, lambda entity, value: f"<{entity}:{value}>")
    assert swept.decode() == "<USER:alice> alices <HOST:node07> node070 root bob /x/<USER:alice>/"
