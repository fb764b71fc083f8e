package com.hospital.surveyinbox.inbox;

import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * The database part of readiness ({@code management.endpoint.health.group.readiness}): DOWN until this pod has
 * once got a working connection from its pools, UP for good after that. A new pod whose path to the database
 * is broken (its pool cannot connect: max_connections reached, a NetworkPolicy, TLS) never becomes ready, so a
 * rollout stops before it takes working pods away; but a database outage later does not take every pod out of
 * the Service — each keeps answering the contract's 503 JSON, which the ingress's own error page is not.
 */
@Component("databaseReached")
public class DatabaseReachedHealthIndicator implements HealthIndicator {

    private final DataSource main;
    private final ReceptionConnections receptions;
    private volatile boolean reached;

    public DatabaseReachedHealthIndicator(DataSource main, ReceptionConnections receptions) {
        this.main = main;
        this.receptions = receptions;
    }

    /** Looks once as soon as the service is up, not only when the first probe comes. */
    @org.springframework.context.event.EventListener(org.springframework.boot.context.event.ApplicationReadyEvent.class)
    public void lookOnceStarted() {
        health();
    }

    @Override
    public Health health() {
        if (reached) {
            return Health.up().build();
        }
        try (Connection a = main.getConnection(); Connection b = receptions.dataSource().getConnection()) {
            if (a.isValid(1) && b.isValid(1)) {
                reached = true;
                return Health.up().build();
            }
            return Health.down().withDetail("reason", "connections not valid yet").build();
        } catch (Exception e) {
            return Health.down().withDetail("reason", e.getClass().getSimpleName()).build();
        }
    }
}
