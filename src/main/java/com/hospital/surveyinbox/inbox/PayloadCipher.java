package com.hospital.surveyinbox.inbox;

import com.hospital.surveyinbox.config.AdapterProperties;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.springframework.stereotype.Component;

/**
 * Encryption at rest of the stored payload (it holds patient data in clear): AES-256-GCM, a random
 * 96-bit nonce per row, the row's id and srvyDrawupNo as associated data (a ciphertext cannot be moved to
 * another row undetected, not even one of the same srvyDrawupNo). Rows sealed before the id was bound
 * (associated data = srvyDrawupNo only) still open; they leave the table with retention. The row stores the key id, so rotating keys is "add a key, make it active": old
 * rows still name the key that opens them. Keys come from {@code adapter.crypto.keys.<id>} (base64 of
 * 32 bytes) — a Kubernetes Secret, never a file in the repository.
 */
@Component
public class PayloadCipher {

    /** A stored payload: the bytes to store and the key id to store beside them (null = clear text). */
    public record Sealed(byte[] bytes, String keyId) {
    }

    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;

    private final boolean enabled;
    private final String activeKey;
    private final Map<String, SecretKey> keys = new HashMap<>();
    private final SecureRandom random = new SecureRandom();

    public PayloadCipher(AdapterProperties properties) {
        AdapterProperties.Crypto crypto = properties.getCrypto();
        this.enabled = crypto.isEnabled();
        // env-bound map keys arrive lower-cased (ADAPTER_CRYPTO_KEYS_K1 -> k1): ids are case-insensitive
        this.activeKey = crypto.getActiveKey() == null ? null : crypto.getActiveKey().toLowerCase(java.util.Locale.ROOT);
        crypto.getKeys().forEach((id, base64) -> {
            byte[] raw;
            try {
                raw = Base64.getDecoder().decode(base64.strip());
            } catch (IllegalArgumentException notBase64) {
                // the decoder's own message quotes the offending character: a piece of the key in the startup log
                throw new IllegalStateException("adapter.crypto.keys." + id + " is not base64");
            }
            if (raw.length != 32) {
                throw new IllegalStateException("adapter.crypto.keys." + id + " must be 32 bytes (base64), got " + raw.length);
            }
            keys.put(id.toLowerCase(java.util.Locale.ROOT), new SecretKeySpec(raw, "AES"));
        });
        if (enabled && (activeKey == null || !keys.containsKey(activeKey))) {
            throw new IllegalStateException("adapter.crypto.enabled=true needs adapter.crypto.active-key naming one of adapter.crypto.keys");
        }
    }

    public boolean enabled() {
        return enabled;
    }

    /** The id rows are sealed with now (lower case), or null while encryption is off. */
    public String activeKeyId() {
        return enabled ? activeKey : null;
    }

    /**
     * Each configured key's check value by id: HMAC-SHA256 of a fixed text under the key, which tells two keys of one
     * id apart and gives nothing of the key away (PayloadKeyCheck compares them across pods).
     */
    public Map<String, byte[]> checkValues() {
        Map<String, byte[]> values = new java.util.TreeMap<>();
        keys.forEach((id, key) -> {
            try {
                javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(key.getEncoded(), "HmacSHA256"));
                values.put(id, mac.doFinal("survey-inbox-adapter payload key check".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("payload key check value of '" + id + "' could not be computed", e);
            }
        });
        return values;
    }

    /** Seals the payload of row {@code inboxId}: the row's id must be known before it is written. */
    public Sealed seal(long inboxId, String srvyDrawupNo, byte[] plain) {
        if (!enabled) {
            return new Sealed(plain, null);
        }
        try {
            byte[] nonce = new byte[NONCE_BYTES];
            random.nextBytes(nonce);
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, keys.get(activeKey), new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(aad(inboxId, srvyDrawupNo));
            byte[] sealed = cipher.doFinal(plain);
            return new Sealed(ByteBuffer.allocate(NONCE_BYTES + sealed.length).put(nonce).put(sealed).array(), activeKey);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("payload encryption failed", e);
        }
    }

    /**
     * Opens the stored payload of row {@code inboxId}; clear text when {@code keyId} is null, null when the
     * payload was redacted. Fails when the ciphertext was not sealed for this row.
     */
    public byte[] open(long inboxId, String srvyDrawupNo, byte[] stored, String keyId) {
        if (stored == null || keyId == null) {
            return stored;
        }
        SecretKey key = keys.get(keyId.toLowerCase(java.util.Locale.ROOT));
        if (key == null) {
            throw new KeyNotConfigured(keyId);
        }
        try {
            return open(key, stored, aad(inboxId, srvyDrawupNo));
        } catch (GeneralSecurityException bound) {
            try { // a row sealed before the row id was bound into the associated data
                return open(key, stored, legacyAad(srvyDrawupNo));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("payload of inbox " + inboxId + " could not be decrypted with key '" + keyId + "'", e);
            }
        }
    }

    private static byte[] open(SecretKey key, byte[] stored, byte[] aad) throws GeneralSecurityException {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, stored, 0, NONCE_BYTES));
        cipher.updateAAD(aad);
        return cipher.doFinal(stored, NONCE_BYTES, stored.length - NONCE_BYTES);
    }

    private static byte[] aad(long inboxId, String srvyDrawupNo) {
        return ("survey-inbox:v2:" + inboxId + ":" + srvyDrawupNo).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] legacyAad(String srvyDrawupNo) {
        return ("survey-inbox:" + srvyDrawupNo).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The row names a key this instance does not have (a rotation rolled out before every pod had the new key, a
     * Secret missing one): a fault of the configuration, not of the row; another instance, or this one once
     * configured, opens it.
     */
    public static final class KeyNotConfigured extends IllegalStateException {

        KeyNotConfigured(String keyId) {
            super("payload encrypted with key '" + keyId + "', which is not configured");
        }
    }
}
