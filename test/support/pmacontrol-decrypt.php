<?php
// Test helper: opens values as PmaControl does (Chiffrement::decrypt → Glial's Crypt::decrypt), so
// that what the service writes into PmaControl's tables is read back by PHP's own OpenSSL, zlib and
// unserialize.
//
//   php pmacontrol-decrypt.php CRYPT_CONFIG_FILE < ciphertexts (one per line)
//
// Prints one JSON string per line.

require $argv[1];

function keygen(string $clearText, int $length): string
{
    $string = base64_encode(base64_encode(md5($clearText, true) . md5($clearText, true)));
    return substr($string, 20, $length);
}

function glialDecrypt(string $value, string $cryptKey)
{
    $data = base64_decode(strtr($value, '-_,', '+/='));
    $iv = substr($data, -16);
    $decrypted = openssl_decrypt(substr($data, 0, -16), 'aes-256-cbc', keygen($cryptKey, 32), OPENSSL_RAW_DATA, $iv);
    return unserialize(gzuncompress($decrypted));
}

while (($line = fgets(STDIN)) !== false) {
    $line = rtrim($line, "\n");
    if ($line === '') {
        continue;
    }
    echo json_encode(glialDecrypt($line, CRYPT_KEY)), "\n";
}
