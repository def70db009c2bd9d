#!/usr/bin/env bash
# The run command: installs Debian packages, builds, and starts `strata server`
# on 127.0.0.1:9000 with ./data as its data directory. Extra arguments are
# passed to `strata server` (e.g. --listen 0.0.0.0:9000 --data /srv/strata).
#
#   scripts/run.sh --tls-self-signed [server flags]
#     also serves HTTPS on 127.0.0.1:9443 with a self-signed certificate for
#     localhost / 127.0.0.1, made once in DATA/tls/ (cert.pem, key.pem 0600),
#     and prints how to make clients trust it.
#
#   scripts/run.sh --tiers [server flags]
#     four tiers (gpu-direct, hot, warm, cold) as directories under
#     DATA/pools/, from docs/examples/tiers.toml (docs/tiers.md).
#
#   Prometheus metrics are served on http://127.0.0.1:7451/metrics unless
#   --metrics-listen is given (docs/metrics.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
self_signed=0
tiers=0
args=()
data="./data"
prev=""
for a in "$@"; do
  if [[ "$a" == --tls-self-signed ]]; then self_signed=1; continue; fi
  if [[ "$a" == --tiers ]]; then tiers=1; continue; fi
  [[ "$prev" == --data ]] && data="$a"
  [[ "$a" == --data=* ]] && data="${a#--data=}"
  args+=("$a")
  prev="$a"
done
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" strata
cd "$root"
if [[ $self_signed == 1 ]]; then
  tls="$data/tls"
  if [[ ! -s "$tls/cert.pem" || ! -s "$tls/key.pem" ]]; then
    mkdir -p "$tls" && chmod 700 "$tls"
    (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -days 825 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
      -keyout "$tls/key.pem" -out "$tls/cert.pem" 2>/dev/null)
    echo "made a self-signed certificate: $tls/cert.pem"
  fi
  echo "trust it: aws --ca-bundle $tls/cert.pem ... | boto3 verify='$tls/cert.pem' |" \
       "curl --cacert $tls/cert.pem | rclone --ca-cert $tls/cert.pem"
  args=(--listen-tls 127.0.0.1:9443 --tls-cert "$tls/cert.pem" --tls-key "$tls/key.pem" "${args[@]}")
fi
if [[ $tiers == 1 ]]; then
  args=(--config "$root/docs/examples/tiers.toml" "${args[@]}")
  echo "four tiers under $data/pools/ (docs/examples/tiers.toml); see them: ./build/strata admin tiers --data $data"
fi
# Prometheus metrics on a loopback port nothing common holds (not 9090,
# Prometheus's own, nor 9100-9999, the exporters'); --metrics-listen off (or
# another address) overrides it.
metrics=1
for a in "${args[@]}"; do [[ "$a" == --metrics-listen* ]] && metrics=0; done
if [[ $metrics == 1 ]]; then
  args=(--metrics-listen 127.0.0.1:7451 "${args[@]}")
fi
exec ./build/strata server "${args[@]}"
