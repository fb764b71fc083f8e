package com.hospital.surveyinbox.processing;

/**
 * The claimed row's payload is sealed with a key this instance does not have: the row waits uncharged
 * (routes/inbox-register.camel.yaml, inbox-register-when-payload-key-missing), as for an open circuit, instead of
 * walking to DEAD and a failure reply while a rotation rolls out or a Secret lacks a key. Its message names the key id
 * only.
 */
public class PayloadKeyMissingException extends RuntimeException {

    private final String keyId;

    public PayloadKeyMissingException(String keyId) {
        super("payload key '" + keyId + "' is not configured on this instance", null, false, false);
        this.keyId = keyId;
    }

    public String keyId() {
        return keyId;
    }

    /**
     * The key id of the {@code PayloadKeyMissingException} in {@code failure}'s causes, or null: Camel wraps what a
     * method expression throws ({@code inbox-register-read}).
     */
    public static String keyIdIn(Throwable failure) {
        PayloadKeyMissingException missing = org.apache.camel.util.ObjectHelper.getException(PayloadKeyMissingException.class, failure);
        return missing == null ? null : missing.keyId();
    }
}
