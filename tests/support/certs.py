"""Certificates made by the tests (the `cryptography` package): a CA, a server certificate for
127.0.0.1/localhost and client certificates, written as PEM files into a directory the caller
owns. Keys are EC P-256 (fast to make); validity is one day around now."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pki:
    """PEM files: the CA, the server's certificate and key, and a client's (CN=alice)."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a CA that signed none of these: a client trusting it must refuse the server


def make_pki(directory: Path, *, server_names: tuple[str, ...] = ("localhost", "127.0.0.1")) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = _ca("groupctl test CA")
    server_key, server = _issued(ca_key, ca, "groupctl test node", server_names, ExtendedKeyUsageOID.SERVER_AUTH)
    client_key, client = _issued(ca_key, ca, "alice", (), ExtendedKeyUsageOID.CLIENT_AUTH, unit="ops")
    _, other = _ca("some other CA")
    paths = Pki(*(directory / name for name in (
        "ca.pem", "server.pem", "server.key", "client.pem", "client.key", "other-ca.pem")))
    paths.ca.write_bytes(_pem(ca))
    paths.server_cert.write_bytes(_pem(server))
    paths.server_key.write_bytes(_key_pem(server_key))
    paths.client_cert.write_bytes(_pem(client))
    paths.client_key.write_bytes(_key_pem(client_key))
    paths.other_ca.write_bytes(_pem(other))
    return paths


def _name(common_name: str, unit: Optional[str] = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "groupctl")]
    if unit:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit))
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return builder.not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))


def _ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(common_name)
    builder = _validity(x509.CertificateBuilder().subject_name(name).issuer_name(name)
                        .public_key(key.public_key()).serial_number(x509.random_serial_number()))
    builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    builder = builder.add_extension(x509.KeyUsage(
        digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
        key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
        decipher_only=False), critical=True)
    builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    return key, builder.sign(key, hashes.SHA256())


def _issued(ca_key, ca: x509.Certificate, common_name: str, names: tuple[str, ...], usage,
            unit: Optional[str] = None) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = _validity(x509.CertificateBuilder().subject_name(_name(common_name, unit)).issuer_name(ca.subject)
                        .public_key(key.public_key()).serial_number(x509.random_serial_number()))
    if names:
        alternatives = [x509.IPAddress(ipaddress.ip_address(n)) if n[0].isdigit() else x509.DNSName(n) for n in names]
        builder = builder.add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
    builder = builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                                    critical=False)
    return key, builder.sign(ca_key, hashes.SHA256())


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
