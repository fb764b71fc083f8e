package com.hospital.surveyinbox.processing;

/** Status and body of a downstream HTTP answer. */
public record DownstreamResponse(int status, String body) {

    public boolean is2xx() {
        return status >= 200 && status < 300;
    }
}
