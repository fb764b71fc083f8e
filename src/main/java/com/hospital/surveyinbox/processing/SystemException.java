package com.hospital.surveyinbox.processing;

/** A downstream could not answer (5xx, timeout, refused connection, unreadable response). Reason: {@code system error}. */
public class SystemException extends RuntimeException {

    private final String downstream;

    public SystemException(String downstream, String message, Throwable cause) {
        super(message, cause);
        this.downstream = downstream;
    }

    /** Which downstream system failed (legacy, account, survey). */
    public String downstream() {
        return downstream;
    }
}
