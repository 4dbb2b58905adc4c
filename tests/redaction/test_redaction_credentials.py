"""Credentials found by where they stand: named assignments, flags, signed URLs, cookies, split lines, PEM prefixes."""

from __future__ import annotations

import pytest

from redaction import Redactor

KEY_BODY = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj", "MhQ7S3vXyZ1Bq9mK0pLcT8rW2a", "Zg=="]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("KAGGLE_KEY=0123abcd", "KAGGLE_KEY=<TOKEN_1>"),
        ("export ROBOFLOW_KEY=sunflower", "export ROBOFLOW_KEY=<TOKEN_1>"),
        ('MAPBOX_KEY="pk.abcdefghij"', 'MAPBOX_KEY="<TOKEN_1>"'),
        ("COMET_PASS: Tubelvenripi", "COMET_PASS: <TOKEN_1>"),
        ("ACME_PWD hunter2hunter", "ACME_PWD <TOKEN_1>"),
        ("'NEPTUNE_TOKEN': 'abc123xyz'", "'NEPTUNE_TOKEN': '<TOKEN_1>'"),
        ("db_password: misolgarsol", "db_password: <TOKEN_1>"),
        (
            '{"config": "{\\"api_key\\": \\"30bFve09CTdU1m2Zcmef\\", \\"lr\\": 0.1}"}',
            '{"config": "{\\"api_key\\": \\"<TOKEN_1>\\", \\"lr\\": 0.1}"}',
        ),
        ("+ python upload.py --password lovenzenka34 --bucket runs", "+ python upload.py --password <TOKEN_1> --bucket runs"),
        ("+ mysql -h db -u train -prigartuqua99 -e 'select 1'", "+ mysql -h db -u train -p<PASSWORD_1> -e 'select 1'"),
        ("+ sshpass -p 'Fozenfofori' rsync -a ckpt/ backup:/ckpt/", "+ sshpass -p '<PASSWORD_1>' rsync -a ckpt/ backup:/ckpt/"),
        ("+ redis-cli -h cache -a quatubel31 ping", "+ redis-cli -h cache -a <PASSWORD_1> ping"),
        ("+ smbclient //fs/share -U gretaiva%Pisolbel88! -c ls", "+ smbclient //fs/share -U <USER_1>%<PASSWORD_1> -c ls"),
        (
            "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=a9frqO7gsgk4AfM%2BTkLz%3D 403",
            "https://<BUCKET_1>.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=<TOKEN_1> 403",
        ),
        (
            "https://storage.googleapis.com/b/o?Expires=1714567890&Signature=hngyu1j0%2FMb0Y5%2BmU5q",
            "https://storage.googleapis.com/<BUCKET_1>/o?Expires=1714567890&Signature=<TOKEN_1>",
        ),
        (
            "conn=DefaultEndpointsProtocol%3Dhttps%3BAccountKey%3DuS7EJw5piMqa%2FyrC%3D%3D%3B",
            "conn=DefaultEndpointsProtocol%3Dhttps%3BAccountKey%3D<TOKEN_1>%3B",
        ),
        (
            "GET /login?next=https%3A%2F%2Fapp%2Fcb%3Ftoken%3DxHliXevRhoW9ltE1%26x%3D1 302",
            "GET /login?next=https%3A%2F%2Fapp%2Fcb%3Ftoken%3D<TOKEN_1>%26x%3D1 302",
        ),
        ("Cookie: sessionid=bd311led2wtc94krs1s2; csrftoken=Zq81lm0PqQ", "Cookie: sessionid=<TOKEN_1>; csrftoken=<TOKEN_2>"),
        ("Set-Cookie: session=sR0wwCg7D5IS; Path=/; HttpOnly", "Set-Cookie: session=<TOKEN_1>; Path=/; HttpOnly"),
        (
            "send: b'GET / HTTP/1.1\\r\\nAuthorization: Basic anRhbmFrYTI6ZG9y\\r\\n\\r\\n'",
            "send: b'GET / HTTP/1.1\\r\\nAuthorization: Basic <TOKEN_1>\\r\\n\\r\\n'",
        ),
        (
            "https://discord.com/api/webhooks/153975165404589951/x9mm0VJZi2oT9brgFBd3D90eYy",
            "https://discord.com/api/webhooks/153975165404589951/<TOKEN_1>",
        ),
        (
            "POST https://api.telegram.org/bot6733401420:L2vNpznBOWnqOAt5ImI5mAgyUb9W5/sendMessage",
            "POST https://api.telegram.org/bot<TOKEN_1>/sendMessage",
        ),
        ("aws_access_key_id AKIAQYLPMN5HHHFPZAM2", "aws_access_key_id <TOKEN_1>"),
        ("PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=<TOKEN_1> psql -h db"),
        ("docker login -u alice -p Sup3rpass", "docker login -u alice -p <PASSWORD_1>"),
        ("machine api.wandb.ai login alice password hunter2pass", "machine api.wandb.ai login <USER_1> password <PASSWORD_1>"),
        ("+ python train.py --hf_token hfabc123xyz --max-tokens 512", "+ python train.py --hf_token <TOKEN_1> --max-tokens 512"),
        ('  "private_key_id": "0123456789abcdef0123456789abcdef01234567",', '  "private_key_id": "<TOKEN_1>",'),
    ],
)
def test_when_a_credential_stands_where_credentials_stand_then_it_is_masked(text: str, expected: str) -> None:
    assert Redactor().redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "WANDB_API_KEY is not set; run `wandb login` or set WANDB_MODE=offline",
        "HF_TOKEN=$HF_TOKEN",
        'OPENAI_API_KEY="${OPENAI_API_KEY}"',
        "pad_token: </s>",
        "tokenizer.pad_token = tokenizer.eos_token",
        "generation config: max_new_tokens=512, use_cache=True",
        "huggingface-cli login --token $HF_TOKEN",
        "mysql -u train -p -e 'select 1'",
        "password: null",
        "Cookie: none",
        "--pad-token </s> --bos-token 1 --max_new_tokens 512 --tokenizer gpt2",
        "SECRET is missing",
        "TOKENIZERS_PARALLELISM=false",
        "HF_TOKEN=hf_mUc************************",
        "                     [--hub_token HUB_TOKEN] [--push_to_hub_token PUSH_TO_HUB_TOKEN]",
    ],
)
def test_when_a_key_word_holds_no_value_then_the_line_is_unchanged(text: str) -> None:
    assert Redactor().redact_text(text) == text


@pytest.mark.parametrize(
    ("lines", "expected_last"),
    [
        (["    - name: ROBOFLOW_KEY", "      value: sunflower42"], "      value: <TOKEN_1>"),
        (["env:", "- name: WANDB_API_KEY", '  value: "0957b2f0830693d8a490a561900a2ad5d6b86919"'], '  value: "<TOKEN_1>"'),
        (["credentials:", "  - T0wePBvUmNefEd8FFWQKh"], "  - <TOKEN_1>"),
        (["[rank0]:credentials:", "[rank0]:  - T0wePBvUmNefEd8FFWQKh"], "[rank0]:  - <TOKEN_1>"),
    ],
)
def test_when_key_and_value_stand_on_different_lines_then_the_value_is_masked(lines: list[str], expected_last: str) -> None:
    assert Redactor().redact_text("\n".join(lines)).split("\n")[-1] == expected_last


PREFIXES = [
    "",
    "  3: ",
    "[1,3]<stdout>:",
    "2024-05-01T12:00:00.123456789Z ",
    "2024-05-01 12:00:00,123 - INFO - ",
    "[rank3]:",
    "[default3]:",
    "I1202 12:00:00.123456 1234 train.py:10] ",
    "node07: ",
]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_when_a_private_key_is_printed_behind_a_launcher_prefix_then_no_body_line_survives(prefix: str) -> None:
    lines = ["-----BEGIN PRIVATE KEY-----", *KEY_BODY, "-----END PRIVATE KEY-----"]
    text = "\n".join(f"{prefix}{line}" for line in ["loading key", *lines, "step 1 loss 2.0"])
    masked = Redactor().redact_text(text)
    assert all(body not in masked for body in KEY_BODY)
    out = masked.split("\n")
    assert len(out) == len(lines) + 2
    assert out[-1].endswith("step 1 loss 2.0")
    assert out[1].endswith("<PRIVATE_KEY_1>")


def test_when_the_timestamp_changes_on_every_key_line_then_the_block_still_holds() -> None:
    lines = ["-----BEGIN RSA PRIVATE KEY-----", *KEY_BODY, "-----END RSA PRIVATE KEY-----"]
    text = "\n".join(f"2024-05-01T12:00:0{i}.00000000{i}Z {line}" for i, line in enumerate(lines))
    masked = Redactor().redact_text(text)
    assert all(body not in masked for body in KEY_BODY)
    assert masked.split("\n")[2] == "2024-05-01T12:00:02.000000002Z <PRIVATE_KEY_1>"
