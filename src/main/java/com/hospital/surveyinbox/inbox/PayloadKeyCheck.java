package com.hospital.surveyinbox.inbox;

import java.security.MessageDigest;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * At start, after the migrations: each configured payload key's check value ({@link PayloadCipher#checkValues}) is
 * recorded under its id the first time any pod starts with it (V21's {@code payload_key}), and compared with the
 * recorded one after that. Other bytes under a known id stop the start, naming the id: rows one pod seals would not
 * open on the others (a system error charged per attempt: DEAD with a failure reply within minutes), which a missing
 * key does not do (it waits, uncharged, for adapter.crypto.key-wait). Logs the ids it holds and the one it seals with
 * (ids only), so an operator can see a key rollout reached every pod.
 */
@Component
public class PayloadKeyCheck implements InitializingBean {

    private static final Logger log = LoggerFactory.getLogger(PayloadKeyCheck.class);

    private final PayloadCipher cipher;
    private final JdbcTemplate jdbc;

    public PayloadKeyCheck(PayloadCipher cipher, JdbcTemplate jdbc) {
        this.cipher = cipher;
        this.jdbc = jdbc;
    }

    @Override
    public void afterPropertiesSet() {
        Map<String, byte[]> values = cipher.checkValues();
        if (values.isEmpty()) {
            return;
        }
        for (Map.Entry<String, byte[]> key : values.entrySet()) {
            jdbc.update("INSERT INTO payload_key (key_id, check_value) VALUES (?, ?) ON CONFLICT (key_id) DO NOTHING",
                    key.getKey(), key.getValue());
            Map<String, Object> recorded = jdbc.queryForMap("SELECT check_value, first_seen FROM payload_key WHERE key_id = ?",
                    key.getKey());
            if (!MessageDigest.isEqual(key.getValue(), (byte[]) recorded.get("check_value"))) {
                throw new IllegalStateException("adapter.crypto.keys." + key.getKey() + " is not the key '" + key.getKey()
                        + "' that pods have used since " + recorded.get("first_seen") + ": rows sealed with either would not"
                        + " open with the other. Give new key bytes a new id (docs/operations.md, rotating the encryption key)");
            }
        }
        log.info("Payload keys held: {}; sealing with {}", values.keySet(),
                cipher.activeKeyId() == null ? "none (encryption off)" : cipher.activeKeyId());
    }
}
