<?php
// Test helper: encrypts values as PmaControl does (Chiffrement::encrypt → Glial's Crypt::encrypt),
// so that the service's decoder meets PHP's own serialize, gzcompress, OpenSSL and base64.
//
//   php pmacontrol-encrypt.php CRYPT_CONFIG_FILE [zero-padding] < values (one JSON string per line)
//
// CRYPT_CONFIG_FILE is a PmaControl configuration/crypt.config.php; it defines CRYPT_KEY.
// Prints one ciphertext per line. "zero-padding" pads with zero bytes, as the framework's mcrypt
// version did, instead of OpenSSL's PKCS#7 padding.

require $argv[1];
$zeroPadding = ($argv[2] ?? '') === 'zero-padding';

function keygen(string $clearText, int $length): string
{
    $string = base64_encode(base64_encode(md5($clearText, true) . md5($clearText, true)));
    return substr($string, 20, $length);
}

function glialEncrypt($value, string $cryptKey, bool $zeroPadding): string
{
    $data = gzcompress(serialize($value));
    $key = keygen($cryptKey, 32);
    $iv = keygen(md5((string) mt_rand(0, 1000000000)) . md5((string) mt_rand(0, 1000000000)), 16);
    if ($zeroPadding) {
        $pad = (16 - strlen($data) % 16) % 16;
        $data .= str_repeat("\0", $pad);
        $encrypted = openssl_encrypt($data, 'aes-256-cbc', $key, OPENSSL_RAW_DATA | OPENSSL_ZERO_PADDING, $iv);
    } else {
        $encrypted = openssl_encrypt($data, 'aes-256-cbc', $key, OPENSSL_RAW_DATA, $iv);
    }
    return strtr(base64_encode($encrypted . $iv), '+/=', '-_,');
}

while (($line = fgets(STDIN)) !== false) {
    $line = rtrim($line, "\n");
    if ($line === '') {
        continue;
    }
    echo glialEncrypt(json_decode($line), CRYPT_KEY, $zeroPadding), "\n";
}
