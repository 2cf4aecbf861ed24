#!/usr/bin/env bash
# Test certificates for TLS, made fresh with openssl in DIR (P-256 keys, valid
# two days):
#   ca.pem ca.key                  the trusted CA
#   server.pem server.key          server certificate by ca: SAN localhost, 127.0.0.1
#   client.pem client.key          client certificate by ca
#   other-ca.pem other-ca.key      a second CA nobody trusts
#   other-client.pem other-client.key   client certificate by other-ca
#
# Usage: make_test_certs.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"

cat >openssl.cnf <<'CNF'
[req]
distinguished_name = dn
[dn]
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
authorityKeyIdentifier = keyid
[client_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
CNF

key_options=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

make_ca() {  # make_ca NAME SUBJECT
  openssl req -x509 "${key_options[@]}" -keyout "$1.key" -out "$1.pem" -days 2 -subj "$2" \
    -config openssl.cnf -extensions ca_ext 2>/dev/null
}
make_cert() {  # make_cert NAME SUBJECT CA EXTENSIONS SERIAL
  openssl req -new "${key_options[@]}" -keyout "$1.key" -out "$1.csr" -subj "$2" \
    -config openssl.cnf 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -set_serial "$5" -days 2 \
    -out "$1.pem" -extfile openssl.cnf -extensions "$4" 2>/dev/null
  rm -f "$1.csr"
}

make_ca ca "/CN=encoder test CA"
make_cert server "/CN=localhost" ca server_ext 1
make_cert client "/CN=encoder test client" ca client_ext 2
make_ca other-ca "/CN=untrusted test CA"
make_cert other-client "/CN=untrusted test client" other-ca client_ext 3
