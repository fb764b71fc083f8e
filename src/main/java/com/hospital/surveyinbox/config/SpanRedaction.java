package com.hospital.surveyinbox.config;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.DelegatingSpanData;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * No span leaves the service with patient data. Camel's spans name each call's URL ({@code camel.uri},
 * {@code http.url}: {@code /legacy/patients/{patno}}, {@code ?patno=}) and turn a failed call's exception message
 * (which quotes that URL) into an event and the status description. Every span exporter (OTLP, or any other
 * bean) gets spans without attributes that hold a URL, a path, a query or a statement, without exception messages
 * or stack traces (the exception's type stays), and without events other than exceptions (Camel records its log
 * lines and error messages as events). Names, ids, timings, statuses and the remaining attributes are unchanged.
 */
@Configuration(proxyBeanMethods = false)
public class SpanRedaction {

    @Bean
    static BeanPostProcessor redactedSpanExport() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                return bean instanceof SpanExporter exporter && !(bean instanceof Redacting)
                        ? new Redacting(exporter) : bean;
            }
        };
    }

    /** True for an attribute that may carry a URL, a path, a query text or a message. */
    static boolean unsafe(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        return k.contains("url") || k.contains("uri") || k.contains("path") || k.contains("query")
                || k.contains("target") || k.contains("statement") || k.contains("message") || k.contains("stacktrace")
                || k.contains("body") || k.contains("header");
    }

    static Attributes redacted(Attributes attributes) {
        AttributesBuilder kept = Attributes.builder();
        attributes.forEach((key, value) -> {
            if (!unsafe(key.getKey())) {
                @SuppressWarnings("unchecked")
                io.opentelemetry.api.common.AttributeKey<Object> k = (io.opentelemetry.api.common.AttributeKey<Object>) key;
                kept.put(k, value);
            }
        });
        return kept.build();
    }

    static SpanData redacted(SpanData span) {
        Attributes attributes = redacted(span.getAttributes());
        List<EventData> events = span.getEvents().stream().filter(e -> "exception".equals(e.getName()))
                .map(e -> EventData.create(e.getEpochNanos(), e.getName(), redacted(e.getAttributes())))
                .toList();
        StatusData status = span.getStatus().getStatusCode() == StatusCode.ERROR
                ? StatusData.error() : span.getStatus();
        return new DelegatingSpanData(span) {
            @Override
            public Attributes getAttributes() {
                return attributes;
            }

            @Override
            public int getTotalAttributeCount() {
                return attributes.size();
            }

            @Override
            public List<EventData> getEvents() {
                return events;
            }

            @Override
            public int getTotalRecordedEvents() {
                return events.size();
            }

            @Override
            public StatusData getStatus() {
                return status;
            }
        };
    }

    /** A span exporter that hands its delegate redacted spans. */
    static final class Redacting implements SpanExporter {

        private final SpanExporter delegate;

        Redacting(SpanExporter delegate) {
            this.delegate = delegate;
        }

        @Override
        public CompletableResultCode export(Collection<SpanData> spans) {
            return delegate.export(spans.stream().map(SpanRedaction::redacted).toList());
        }

        @Override
        public CompletableResultCode flush() {
            return delegate.flush();
        }

        @Override
        public CompletableResultCode shutdown() {
            return delegate.shutdown();
        }
    }
}
