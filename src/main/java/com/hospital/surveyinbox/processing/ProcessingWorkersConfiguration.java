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
}
