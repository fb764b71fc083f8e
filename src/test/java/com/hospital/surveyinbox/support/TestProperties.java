package com.hospital.surveyinbox.support;

import com.hospital.surveyinbox.config.AdapterProperties;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * An {@link AdapterProperties} bound the way the service binds it (constructor binding, defaults on the
 * constructor), from a few {@code adapter.*} keys: for tests that build a store or a cipher by hand.
 */
public final class TestProperties {

    private TestProperties() {
    }

    public static AdapterProperties bind(Map<String, String> adapterKeys) {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("adapter.legacy.base-url", "http://localhost:1/legacy");
        all.put("adapter.account.base-url", "http://localhost:1/account");
        all.put("adapter.survey.base-url", "http://localhost:1/survey");
        all.put("adapter.security.legacy.username", "legacy");
        all.put("adapter.security.legacy.password", "legacy-test-secret");
        all.put("adapter.security.ops.username", "ops");
        all.put("adapter.security.ops.password", "ops-test-secret");
        all.putAll(adapterKeys);
        return new Binder(new MapConfigurationPropertySource(all)).bind("adapter", AdapterProperties.class).get();
    }

    /** Payload encryption on with these keys, and the group insert off (stores that take one row at a time). */
    public static AdapterProperties encrypting(Map<String, String> keys, String activeKey) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("adapter.crypto.enabled", "true");
        if (activeKey != null) {
            p.put("adapter.crypto.active-key", activeKey);
        }
        keys.forEach((id, key) -> p.put("adapter.crypto.keys." + id, key));
        p.put("adapter.reception.group-insert.enabled", "false");
        return bind(p);
    }
}
