package com.hospital.surveyinbox.processing;

import com.hospital.surveyinbox.config.AdapterProperties;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code inboxProcessPool}: the {@link ProcessingWorkers} of {@code routes/inbox-process.camel.yaml}. Camel
 * stops its routes (waiting for the rows in flight) before Spring shuts the pool down.
 */
@Configuration(proxyBeanMethods = false)
public class ProcessingWorkersConfiguration {

    @Bean(name = "inboxProcessPool", destroyMethod = "shutdown")
    ProcessingWorkers inboxProcessPool(AdapterProperties properties, MeterRegistry meters) {
        return new ProcessingWorkers(properties, meters);
    }

    /**
     * When Camel begins to stop, the workers take no new record ({@link ProcessingWorkers#stopTakingWork}): the
     * rows in flight finish within camel.main.shutdown-timeout, and the rest, their offsets uncommitted
     * (KafkaOffsets), are left to the partition's next owner instead of being started and cut off; when it starts again, they do. Context events only: no notification
     * per exchange.
     */
    @Bean
    org.apache.camel.spi.EventNotifier stopHandingOverWhenCamelStops(ProcessingWorkers inboxProcessPool) {
        org.apache.camel.support.EventNotifierSupport notifier = new org.apache.camel.support.EventNotifierSupport() {
            @Override
            public boolean isEnabled(org.apache.camel.spi.CamelEvent event) {
                return event instanceof org.apache.camel.spi.CamelEvent.CamelContextStoppingEvent
                        || event instanceof org.apache.camel.spi.CamelEvent.CamelContextStartingEvent;
            }

            @Override
            public void notify(org.apache.camel.spi.CamelEvent event) {
                if (event instanceof org.apache.camel.spi.CamelEvent.CamelContextStoppingEvent) {
                    inboxProcessPool.stopTakingWork();
                } else {
                    inboxProcessPool.takeWork(); // a context stopped and started again in one JVM takes records again
                }
            }
        };
        notifier.setIgnoreExchangeEvents(true);
        notifier.setIgnoreRouteEvents(true);
        notifier.setIgnoreServiceEvents(true);
        notifier.setIgnoreStepEvents(true);
        return notifier;
    }
}
