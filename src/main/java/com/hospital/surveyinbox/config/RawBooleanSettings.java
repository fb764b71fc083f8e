package com.hospital.surveyinbox.config;

import java.util.List;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * The switches the routes read as written ({@code {{adapter.inbox.enabled}} == false}, a route's
 * {@code autoStartup}) must be written {@code true} or {@code false} (in any case, without spaces): Spring binds {@code off}, {@code no} or
 * {@code 0} as false and starts cleanly, but Camel compares the text, so {@code ADAPTER_INBOX_ENABLED=off} — the
 * rollback toggle flipped in an incident — left every reception on the inbox path, silently. Checked as the
 * context starts: the boot fails naming the key.
 */
@Component
public class RawBooleanSettings {

    /** The keys routes/*.camel.yaml read as {@code {{placeholders}}} and take for booleans. */
    static final List<String> KEYS = List.of("adapter.inbox.enabled", "adapter.inbox.redeliver-enabled",
            "adapter.retention.enabled");

    public RawBooleanSettings(Environment environment) {
        for (String key : KEYS) {
            String value = environment.getProperty(key);
            // any case (Camel reads TRUE and False as Spring does), but no spaces: Camel does not trim them
            if (value != null && !value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
                throw new IllegalStateException(key + " must be written true or false (the routes read it as written), not '"
                        + value + "'");
            }
        }
    }
}
