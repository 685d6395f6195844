#!/bin/sh
# Makes self-signed-cert.pem and self-signed-key.pem: the certificate of a TLS test target that no
# client trusts (hostile-targets.test.ts), for localhost and 127.0.0.1. Committed, so the tests need
# no openssl. Valid from 2000 to 2100, so neither a machine's clock nor time makes it expire; that
# takes `openssl ca`, since `openssl req -x509` (OpenSSL 3.0) always starts at now.
set -eu
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/index.txt"
echo 01 >"$work/serial"
cat >"$work/ca.cnf" <<CONFIG
[ca]
default_ca = self
[self]
database = $work/index.txt
new_certs_dir = $work
serial = $work/serial
default_md = sha256
policy = anything
[anything]
commonName = supplied
[target]
subjectAltName = DNS:localhost,IP:127.0.0.1
basicConstraints = CA:FALSE
CONFIG
openssl req -new -newkey rsa:2048 -nodes -subj /CN=localhost -keyout self-signed-key.pem -out "$work/request.pem"
openssl ca -batch -notext -selfsign -config "$work/ca.cnf" -extensions target -keyfile self-signed-key.pem \
  -in "$work/request.pem" -out self-signed-cert.pem -startdate 20000101000000Z -enddate 21000101000000Z
