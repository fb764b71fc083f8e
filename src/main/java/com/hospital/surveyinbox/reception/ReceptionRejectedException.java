package com.hospital.surveyinbox.reception;

/** A message refused at reception: nothing is stored and the sender gets {@code status} with {@code resultCode N}. */
public class ReceptionRejectedException extends RuntimeException {

    private final int status;

    public ReceptionRejectedException(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
