package com.hospital.surveyinbox.processing;

/**
 * A downstream's circuit is open: the call was not made and the row waits uncharged. Thrown by DownstreamCalls#before,
 * or by routes/inbox-register.camel.yaml's inbox-register-if-later-downstream-open (its message: the downstream).
 */
public class CircuitOpenException extends RuntimeException {

    private final String downstream;

    public CircuitOpenException(String downstream) {
        super(downstream + " circuit is open", null, false, false);
        this.downstream = downstream;
    }

    public String downstream() {
        return downstream;
    }
}
