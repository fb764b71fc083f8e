package com.hospital.surveyinbox.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.EmbeddedServices;
import com.hospital.surveyinbox.support.TestProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Status;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;

/**
 * Readiness's database part: DOWN while this pod has never reached the database (a new pod with a broken
 * path to it must not take traffic or let a rollout go on), UP once it has, and UP through a later outage
 * (every pod then answers 503 JSON instead of leaving the Service). Real connections, switched by route.
 */
class DatabaseReachedHealthIndicatorTest {

    @Test
    void downUntilTheDatabaseWasReachedOnceThenUpThroughAnOutage() {
        EmbeddedServices services = EmbeddedServices.get();
        AtomicReference<String> route = new AtomicReference<>("nowhere");
        AbstractRoutingDataSource switched = new AbstractRoutingDataSource() {
            @Override
            protected Object determineCurrentLookupKey() {
                return route.get();
            }
        };
        DriverManagerDataSource nowhere = new DriverManagerDataSource(
                "jdbc:postgresql://localhost:" + EmbeddedServices.freePort() + "/inbox?connectTimeout=1", "postgres", "");
        DriverManagerDataSource database = new DriverManagerDataSource(services.jdbcUrl(), EmbeddedServices.DB_USER, "");
        switched.setTargetDataSources(Map.of("nowhere", nowhere, "database", database));
        switched.afterPropertiesSet();
        DatabaseReachedHealthIndicator indicator = new DatabaseReachedHealthIndicator(switched,
                new ReceptionConnections(switched, TestProperties.bind(Map.of()), new SimpleMeterRegistry()));

        assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
        route.set("database");
        assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
        route.set("nowhere");
        assertThat(indicator.health().getStatus()).as("an outage after the first contact").isEqualTo(Status.UP);
    }
}
