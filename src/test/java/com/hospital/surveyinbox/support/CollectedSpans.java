package com.hospital.surveyinbox.support;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * A span exporter keeping what it is given, as an OTLP exporter would receive it (after config/SpanRedaction): a test
 * class declares one as a bean of its context ({@code @TestConfiguration}) and reads the spans back.
 */
public final class CollectedSpans implements SpanExporter {

    private final List<SpanData> spans = new CopyOnWriteArrayList<>();

    /** The spans exported so far. */
    public Stream<SpanData> stream() {
        return spans.stream();
    }

    @Override
    public CompletableResultCode export(Collection<SpanData> exported) {
        spans.addAll(exported);
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
        return CompletableResultCode.ofSuccess();
    }
}
