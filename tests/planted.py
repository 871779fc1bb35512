"""A repository with credentials planted in every form kbc must redact.

The values are made at run time from a fixed seed, so no scanner mistakes this
file for a leak, and every run plants the same ones.
"""

from __future__ import annotations

import base64
import json
import random
import string

_ALNUM = string.ascii_letters + string.digits


def _make(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def planted() -> tuple[dict[str, str], dict[str, str]]:
    """(files of the repository, the planted values by form name)."""
    rng = random.Random(20261201)

    def alnum(n: int) -> str:
        return _make(rng, _ALNUM, n)

    def digits(n: int) -> str:
        return _make(rng, string.digits, n)

    def hexa(n: int) -> str:
        return _make(rng, "0123456789abcdef", n)

    def b64url(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    jwt = ".".join(
        [
            b64url(b'{"alg":"HS256","typ":"JWT"}'),
            b64url(json.dumps({"sub": alnum(10), "name": "Ada", "iat": 1700000000}).encode()),
            b64url(bytes(rng.randrange(256) for _ in range(32))),
        ]
    )
    pem_body = [base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode() for _ in range(6)]
    v = {
        "py_hex_key": hexa(32),
        "py_password": "Tr0ub4dor&3" + alnum(6),
        "py_docstring_key": alnum(36),
        "py_github_comment": "ghp_" + alnum(36),
        "py_aws_access": "AKIA" + _make(rng, string.ascii_uppercase + "234567", 16),
        "py_aws_secret": alnum(40),
        "py_db_url_password": "pw" + alnum(14),
        "py_pem_line": pem_body[2],
        "py_jwt": jwt,
        "py_slack_webhook": f"T{alnum(8).upper()}/B{alnum(8).upper()}/{alnum(24)}",
        "py_stripe": "sk_live_" + alnum(24),
        "py_dict_password": "dictpw-" + alnum(12),
        "md_export_openai": "sk-proj-" + alnum(48),
        "md_bearer": alnum(40),
        "md_jwt": jwt,
        "md_basic_auth_url": "lnk" + alnum(13),
        "md_ssh_key_line": pem_body[4],
        "nb_api_key": hexa(32),
        "nb_password": "nbpass-" + alnum(10),
        "nb_hf_token": "hf_" + alnum(34),
        "nb_output_github": "ghp_" + alnum(36),
        "yaml_folded_password": "folded-" + alnum(20),
        "yaml_plain_api_key": alnum(32),
        "yaml_literal_secret": "literal-" + alnum(20),
        "yaml_gitlab_token": "glpat-" + alnum(20),
        "docker_env_token": hexa(40),
        "docker_env_space_password": "dockerpw" + alnum(12),
        "docker_arg_npm": "npm_" + alnum(36),
        "dotenv_secret_key": alnum(50),
        "shell_aws_secret": alnum(40),
        "toml_token": alnum(32),
        "ini_password": "inipw-" + alnum(12),
        "json_client_secret": alnum(40),
        "js_api_key": "AIza" + alnum(35),
        "npmrc_token": "npm_" + alnum(36),
        "rst_bearer": alnum(40),
        "txt_anthropic": "sk-ant-api03-" + alnum(80),
        "pem_file_line": pem_body[0],
    }
    # kinds the packages of benchmarks/secret_precision.py show as examples, here in real formats
    sa_body = [base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode() for _ in range(4)]
    v.update(
        {
            "py_basic_auth_header": base64.b64encode(f"deploy:{alnum(18)}".encode()).decode(),
            "py_django_secret_key": "django-insecure-"
            + _make(rng, string.ascii_lowercase + "0123456789!@#$%^&*(-_=+)", 50),
            "json_service_account_key": sa_body[1],
            "azure_storage_key": base64.b64encode(bytes(rng.randrange(256) for _ in range(64))).decode(),
            "test_stripe_live": "sk_live_" + alnum(24),
            "yaml_slack_bot_token": f"xoxb-{digits(12)}-{digits(13)}-{alnum(24)}",
            "shell_vault_token": "hvs." + alnum(24),
        }
    )
    sa_key = "\n".join(["-----BEGIN PRIVATE KEY-----", *sa_body, "-----END PRIVATE KEY-----"]) + "\n"
    pem = ["-----BEGIN RSA PRIVATE KEY-----", *pem_body, "-----END RSA PRIVATE KEY-----"]
    notebook = {
        "cells": [
            {
                "cell_type": "markdown",
                "metadata": {},
                "source": [
                    "# Loading the model\n",
                    "\n",
                    f"Log in with `huggingface-cli login --token {v['nb_hf_token']}`.\n",
                ],
            },
            {
                "cell_type": "code",
                "execution_count": 1,
                "metadata": {},
                "source": [
                    "import requests\n",
                    f'api_key = "{v["nb_api_key"]}"\n',
                    f'password = "{v["nb_password"]}"\n',
                    "resp = requests.get('https://api.example.com', auth=('me', password))\n",
                ],
                "outputs": [
                    {
                        "output_type": "stream",
                        "name": "stdout",
                        "text": [f"deploying with {v['nb_output_github']}\n"],
                    }
                ],
            },
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    files = {
        "app/__init__.py": '"""The app."""\n',
        "app/settings.py": (
            '"""Settings of the app."""\n\n'
            f'API_KEY = "{v["py_hex_key"]}"\n'
            f'password = "{v["py_password"]}"\n'
            f'DATABASE_URL = "postgres://app:{v["py_db_url_password"]}@db.internal:5432/app"\n'
            f'AWS_ACCESS_KEY_ID = "{v["py_aws_access"]}"\n'
            f'aws_secret_access_key = "{v["py_aws_secret"]}"\n'
            f'STRIPE_KEY = "{v["py_stripe"]}"\n'
            f'SLACK_WEBHOOK = "https://hooks.slack.com/services/{v["py_slack_webhook"]}"\n'
            f'SERVICE = {{"user": "svc", "password": "{v["py_dict_password"]}"}}\n'
            f'SESSION_TOKEN = "{v["py_jwt"]}"\n'
        ),
        "app/client.py": (
            "def connect():\n"
            f'    """{v["py_docstring_key"]} is the key this client signs with."""\n'
            f"    # token: {v['py_github_comment']}\n"
            "    return 1\n\n\n"
            'SIGNING_KEY = """\n' + "\n".join(pem) + '\n"""\n'
        ),
        "docs/setup.md": (
            "# Setup\n\nSet the key before running:\n\n```bash\n"
            f"export OPENAI_API_KEY={v['md_export_openai']}\n```\n\n"
            f'Call it with `curl -H "Authorization: Bearer {v["md_bearer"]}" https://api.example.com`.\n\n'
            f"A session looks like {v['md_jwt']} once signed.\n\n"
            f"The [dashboard](https://admin:{v['md_basic_auth_url']}@dash.example.com) shows it.\n\n"
            f"The staging password is {v['py_password']}, the same as in the settings.\n\n"
            "```\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
            + "\n".join(pem_body[3:6])
            + "\n-----END OPENSSH PRIVATE KEY-----\n```\n"
        ),
        "notebooks/explore.ipynb": json.dumps(notebook, indent=1) + "\n",
        "deploy/values.yaml": (
            "database:\n  user: app\n  password: >-\n"
            f"    {v['yaml_folded_password']}\n"
            f"api_key: {v['yaml_plain_api_key']}\n"
            "tls:\n  secret: |\n"
            f"    {v['yaml_literal_secret']}\n"
        ),
        ".gitlab-ci.yml": (
            "deploy:\n  script:\n"
            f"    - git push https://oauth2:{v['yaml_gitlab_token']}@gitlab.example.com/app.git\n"
        ),
        "Dockerfile": (
            "FROM python:3.11-slim\n"
            f"ENV API_TOKEN={v['docker_env_token']}\n"
            f"ENV DB_PASSWORD {v['docker_env_space_password']}\n"
            f"ARG NPM_TOKEN={v['docker_arg_npm']}\n"
            "COPY . /app\n"
            'CMD ["python", "-m", "app"]\n'
        ),
        ".env": f"SECRET_KEY={v['dotenv_secret_key']}\nDEBUG=1\n",
        "scripts/deploy.sh": (
            "#!/bin/sh\n"
            f"export AWS_SECRET_ACCESS_KEY={v['shell_aws_secret']}\n"
            "aws s3 sync build/ s3://bucket\n"
        ),
        "config/service.toml": f'[auth]\ntoken = "{v["toml_token"]}"\n',
        "setup.cfg": f"[db]\npassword = {v['ini_password']}\n",
        "config/oauth.json": json.dumps({"client_id": "app", "client_secret": v["json_client_secret"]})
        + "\n",
        "web/main.js": f'const apiKey = "{v["js_api_key"]}";\nexport default apiKey;\n',
        ".npmrc": f"//registry.npmjs.org/:_authToken={v['npmrc_token']}\n",
        "docs/api.rst": (
            "API\n===\n\n.. code-block:: bash\n\n"
            f"   curl -H 'Authorization: Bearer {v['rst_bearer']}' https://api.example.com\n"
        ),
        "notes.txt": f"Claude key for the demo: {v['txt_anthropic']}\n",
        "certs/server.pem": "\n".join(pem) + "\n",
        "app/client_auth.py": (
            '"""Calls to the deploy service."""\n\n'
            f'HEADERS = {{"Authorization": "Basic {v["py_basic_auth_header"]}"}}\n'
        ),
        "app/django_settings.py": f'SECRET_KEY = "{v["py_django_secret_key"]}"\nDEBUG = False\n',
        "config/service-account.json": json.dumps(
            {
                "type": "service_account",
                "project_id": "shop-prod",
                "private_key": sa_key,
                "client_email": "deploy@shop-prod.iam.gserviceaccount.com",
            },
            indent=2,
        )
        + "\n",
        "config/storage.yaml": (
            "storage:\n  connection: DefaultEndpointsProtocol=https;AccountName=shopdata;"
            f"AccountKey={v['azure_storage_key']};EndpointSuffix=core.windows.net\n"
        ),
        "tests/test_billing.py": (
            "def test_charge():\n"
            f'    client = Client(api_key="{v["test_stripe_live"]}")\n'
            "    assert client.charge(100)\n"
        ),
        ".github/workflows/notify.yml": (
            "on: push\njobs:\n  notify:\n    runs-on: ubuntu-latest\n    env:\n"
            f"      SLACK_BOT_TOKEN: {v['yaml_slack_bot_token']}\n"
        ),
        "scripts/vault.sh": (
            f"#!/bin/sh\nexport VAULT_TOKEN={v['shell_vault_token']}\nvault kv get secret/shop\n"
        ),
    }
    return files, v
