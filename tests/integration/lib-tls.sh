# shellcheck shell=bash
# lib-tls.sh: a test CA and certificates, for the tests of --broker's TLS. Source it after lib.sh.
#   make_certificates DIR   DIR/ca.pem (the CA: point SSL_CERT_FILE at it), and DIR/NAME.pem + DIR/NAME.key for
#                           good (localhost and 127.0.0.1, signed by the CA), othername (other.example only, signed
#                           by the CA) and untrusted (localhost and 127.0.0.1, self-signed)

command -v openssl >/dev/null || skip "openssl (the CLI) is needed to make the test CA"

# A CA, a certificate it signs for localhost and 127.0.0.1, one it signs for another name only, and one for the
# right names that no trusted CA signed.
make_certificates() {
    local d=$1
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${ec[@]}" -keyout "$d/ca.key" -out "$d/ca.pem" -days 2 -subj /CN=confine-test-ca 2>/dev/null
    issue() {  # NAME SAN [SIGNER]
        openssl req "${ec[@]}" -keyout "$d/$1.key" -out "$d/$1.csr" -subj "/CN=$1" 2>/dev/null
        printf 'subjectAltName=%s\n' "$2" >"$d/$1.ext"
        if [[ ${3:-ca} == self ]]; then
            openssl x509 -req -in "$d/$1.csr" -signkey "$d/$1.key" -out "$d/$1.pem" -days 2 -extfile "$d/$1.ext" 2>/dev/null
        else
            openssl x509 -req -in "$d/$1.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -out "$d/$1.pem" \
                -days 2 -extfile "$d/$1.ext" 2>/dev/null
        fi
    }
    issue good "DNS:localhost,IP:127.0.0.1"
    issue othername "DNS:other.example"
    issue untrusted "DNS:localhost,IP:127.0.0.1" self
}

