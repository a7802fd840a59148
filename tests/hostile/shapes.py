"""Real shapes of texts that carry credentials, for the redaction tests (issue 36).

Each shape names its public source. The field names, the order and the surrounding text are
the source's; the key material is made up here (never issued), except where the source itself
publishes a value as an example (AWS's ``...EXAMPLE`` keys, the Azure storage emulator's
well-known account key), which is then used as published.
"""

from __future__ import annotations

import base64
import datetime
import json
import random

# -- PEM private keys ---------------------------------------------------------------------------

PKCS8_RSA_HEAD = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"
"""How the base64 of a 2048-bit RSA key in PKCS#8 DER begins (the DER header is fixed)."""
OPENSSH_HEAD = "b3BlbnNzaC1rZXktdjEAAAAA"
"""``openssh-key-v1\\0`` in base64: how every OPENSSH PRIVATE KEY body begins (OpenSSH's
PROTOCOL.key)."""


def pem_body(seed: int, size: int = 1624, head: str = PKCS8_RSA_HEAD) -> list[str]:
    """Made-up base64 of ``size`` characters (a 2048-bit PKCS#8 key has about 1,624), cut in
    lines of 64 as RFC 7468 writes them; the same for the same seed."""
    rng = random.Random(seed)
    raw = base64.b64encode(rng.randbytes(size)).decode("ascii")
    text = (head + raw)[:size]
    return [text[i : i + 64] for i in range(0, len(text), 64)]


LABELS = (
    "PRIVATE KEY",  # PKCS#8 (RFC 7468, section 10)
    "RSA PRIVATE KEY",  # PKCS#1, as OpenSSL writes it
    "EC PRIVATE KEY",  # SEC 1 / RFC 5915
    "OPENSSH PRIVATE KEY",  # ssh-keygen's default since OpenSSH 7.8
    "ENCRYPTED PRIVATE KEY",  # PKCS#8 encrypted (RFC 7468, section 11)
)
"""The labels of private-key PEM blocks the brief names."""


def pem(label: str, lines: list[str], newline: str = "\n", *, end: bool = True) -> str:
    """A PEM block as RFC 7468 lays it out, its lines joined by ``newline`` (a real line
    break, ``\\r\\n``, or an escaped one as JSON and Python reprs write it); without its END
    line when ``end`` is false (a block cut short)."""
    parts = [f"-----BEGIN {label}-----", *lines]
    if end:
        parts.append(f"-----END {label}-----")
    return newline.join(parts) + (newline if end else "")


ENCRYPTED_RSA_HEADERS = [
    "Proc-Type: 4,ENCRYPTED",
    "DEK-Info: AES-128-CBC,3F2504E04F8911D39A0C0305E82C3301",
    "",
]
"""The RFC 1421 headers OpenSSL writes into a traditional encrypted ``RSA PRIVATE KEY``."""

# -- a Google Cloud / Vertex AI service-account key file ----------------------------------------

SERVICE_ACCOUNT_LINES = pem_body(36)


def service_account() -> dict[str, str]:
    """A service-account key file as Google issues it: the fields and their order of Google's
    key files (google.github.io/adk-docs API reference, ``ServiceAccountCredential``, which
    lists type, project_id, private_key_id, private_key, client_email, client_id, auth_uri,
    token_uri, auth_provider_x509_cert_url, client_x509_cert_url and universe_domain; the
    same in the file LiteLLM users paste in BerriAI/litellm#8086). Ids and the key made up."""
    email = "vertex-runner@example-project-421.iam.gserviceaccount.com"
    return {
        "type": "service_account",
        "project_id": "example-project-421",
        "private_key_id": "5f0c2b8e9d41a7c3e6b2f9d0a1c4e7b3d6f8a2c5",
        "private_key": pem("PRIVATE KEY", SERVICE_ACCOUNT_LINES),
        "client_email": email,
        "client_id": "104237781523904912845",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/"
        + email.replace("@", "%40"),
        "universe_domain": "googleapis.com",
    }


SERVICE_ACCOUNT_KEPT = ("private_key_id", "client_email", "client_id", "project_id", "token_uri")
"""Members of the key file that are no key material, kept: the key's id names the key
(Google lists it in the console), the rest are addresses and ids."""

# -- AWS temporary credentials -------------------------------------------------------------------

AWS_CREDENTIALS = {
    "AccessKeyId": "AKIAIOSFODNN7EXAMPLE",
    "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    "SessionToken": "AQoEXAMPLEH4aoAH0gNCAPyJxz4BlCFFxWNE1OPTgk5TthT+FvwqnKwRcOIfrRh3c/"
    "LTo6UDdyJwOOvEVPvLXCrrrUtdnniCEXAMPLE/IvU1dYUg2RVAJBanLiHb4IgRmpRV3zrkuWJOgQs8IZZaIv2B"
    "XIa2R4OlgkBN9bkUDNCJiBeb/AXlzBBko7b15fjrBs2+cTQtpZ3CYWFXG8C5zqx37wnOE49mRl/+OtkIKGO7fAE",
    "Expiration": "2020-05-19T18:06:10+00:00",
}
"""``aws sts get-session-token``'s ``Credentials``, with the example values AWS publishes
(aws/aws-cli, awscli/examples/sts/get-session-token.rst)."""
AWS_SECRETS = (AWS_CREDENTIALS["SecretAccessKey"], AWS_CREDENTIALS["SessionToken"])


class _TzUtc(datetime.tzinfo):
    """UTC, shown as dateutil's ``tzutc()`` is (botocore parses timestamps into it)."""

    def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta:
        return datetime.timedelta(0)

    def dst(self, dt: datetime.datetime | None) -> datetime.timedelta:
        return datetime.timedelta(0)

    def tzname(self, dt: datetime.datetime | None) -> str:
        return "UTC"

    def __repr__(self) -> str:
        return "tzutc()"


def aws_credentials_repr() -> str:
    """How ``print(sts.get_session_token()["Credentials"])`` shows them: boto3 returns the
    expiration as a ``datetime`` in dateutil's UTC zone."""
    credentials: dict[str, object] = dict(AWS_CREDENTIALS)
    credentials["Expiration"] = datetime.datetime(2020, 5, 19, 18, 6, 10, tzinfo=_TzUtc())
    return repr(credentials)


def aws_cli_output() -> str:
    """The CLI's output: ``{"Credentials": {...}}`` indented by 4 as the AWS example prints it."""
    return json.dumps({"Credentials": AWS_CREDENTIALS}, indent=4)


# -- Azure connection strings and shared access signatures --------------------------------------

AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
"""The storage emulator's well-known account key, as Microsoft publishes it
(MicrosoftDocs/azure-docs, includes/storage-emulator-connection-string-include.md)."""
STORAGE_KEY = "q9Wz3Lm8Rt5Yv2Nb7Xc4Hd1Kf6Jg0Ps3Ua8Ie5Oy2Tr9Ew7Qm4Zl1Vk6Bn3Mc0Xs8Df5Gh2Jk9Lp7Aa=="
"""A made-up account key of the same shape (64 bytes in base64)."""

STORAGE_CONNECTION = (
    f"DefaultEndpointsProtocol=https;AccountName=storagesample;AccountKey={STORAGE_KEY};"
    "EndpointSuffix=core.chinacloudapi.cn;"
)
"""Microsoft's connection string with an endpoint suffix (MicrosoftDocs/azure-docs,
articles/storage/common/storage-configure-connection-string.md), its key made up."""
EMULATOR_CONNECTION = (
    f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
    "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"
    "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"
    "QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;"
)
"""The emulator's connection string as Microsoft publishes it (same include file)."""

SAS_SIG = "9aCzs76n0E7y5BpEi2GvsSv433BZa22leDOZXX%2BXXIU%3D"
SAS_CONNECTION = (
    "BlobEndpoint=https://storagesample.blob.core.windows.net;"
    "SharedAccessSignature=sv=2015-04-05&sr=b&si=tutorial-policy-635959936145100803"
    f"&sig={SAS_SIG}"
)
"""A connection string holding a service SAS, with Microsoft's example values
(MicrosoftDocs/azure-docs, includes/storage-use-sas-in-connection-string-include.md)."""
SAS_URL = (
    "https://storagesample.blob.core.windows.net/sample-container/sample.txt"
    "?sv=2015-07-08&sig=iCvQmdZngZNW%2F4vw43j6%2BVz6fndHF5LI639QJba4r8o%3D&spr=https"
    "&st=2016-04-12T03%3A24%3A31Z&se=2016-04-13T03%3A29%3A31Z&srt=s&ss=bf&sp=rwl"
)
"""A blob URL with the account SAS of the same Microsoft page (its query parameters)."""
SAS_URL_SIG = "iCvQmdZngZNW%2F4vw43j6%2BVz6fndHF5LI639QJba4r8o%3D"

SERVICE_BUS_KEY = "Zp3Kq8Wm1Rt6Yx9Nb4Vc7Hd2Lf5Jg0Ps8Ua3Ie6Oy1Tr4="
"""A made-up shared access key (a 256-bit key in base64, as Service Bus issues them)."""
SERVICE_BUS_CONNECTION = (
    "Endpoint=sb://contoso.servicebus.windows.net/;"
    "SharedAccessKeyName=RootManageSharedAccessKey;"
    f"SharedAccessKey={SERVICE_BUS_KEY}"
)
"""A Service Bus namespace connection string: Endpoint, SharedAccessKeyName (the policy
``RootManageSharedAccessKey`` every namespace gets) and SharedAccessKey (Microsoft Learn,
``ServiceBusConnectionStringProperties``; MicrosoftDocs/azure-docs,
articles/service-bus-messaging/service-bus-sas.md)."""
SERVICE_BUS_SIG = "bGtNfQ8d3Xz6Rk1Wm9Vy4Ps7Hq2Lc5Jb0Ua3Te6Oi8%3D"
SERVICE_BUS_TOKEN = (
    "SharedAccessSignature sr=https%3A%2F%2Fcontoso.servicebus.windows.net%2FcontosoTopics%2FT1"
    f"&sig={SERVICE_BUS_SIG}&se=1438205742&skn=RootManageSharedAccessKey"
)
"""A SAS token in the format of the same page (``SharedAccessSignature sig=...&se=...&skn=
...&sr=...``, here in the order its code samples write it); the signature made up."""
