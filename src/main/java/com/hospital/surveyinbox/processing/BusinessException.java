package com.hospital.surveyinbox.processing;

/**
 * A downstream said no for a business reason (4xx with {@code {code,message}}). Retried like any failure;
 * the downstream message becomes the row's reason and, on DEAD, the legacy system's reason.
 */
public class BusinessException extends RuntimeException {

    private final String code;

    public BusinessException(String code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public String code() {
        return code;
    }
}
