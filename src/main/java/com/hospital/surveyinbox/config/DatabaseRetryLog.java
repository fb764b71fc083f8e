package com.hospital.surveyinbox.config;

import org.apache.camel.Exchange;
import org.apache.camel.ExchangePropertyKey;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The line written before each try again of a statement the database did not answer: the {@code onRedeliveryRef}
 * of the database-busy clauses (inbox-process-row-database-busy, inbox-process-row-outcome-unrecorded,
 * inbox-process-row-claim-unanswered, inbox-reply-database-busy, inbox-reply-delivered-unrecorded,
 * inbox-receive-record-database-busy). Camel's own retry line ({@code logRetryAttempted}) prints the exception
 * itself: Spring's JDBC exceptions carry the statement's text, an HTTP client's its URL, and a log line names a
 * failure only as {@link LoggedFailure} does (the clauses set {@code logRetryAttempted: false}: Camel's default logs
 * it at DEBUG). A {@link Processor} because the error handler's redelivery hook is one.
 */
@org.springframework.stereotype.Component("databaseRetryLog")
public class DatabaseRetryLog implements Processor {

    private static final Logger log = LoggerFactory.getLogger(DatabaseRetryLog.class);

    @Override
    public void process(Exchange exchange) {
        Throwable caught = exchange.getProperty(ExchangePropertyKey.EXCEPTION_CAUGHT, Throwable.class);
        log.warn("{}: the database did not answer ({}); retry {} of {} follows",
                exchange.getProperty(ExchangePropertyKey.FAILURE_ROUTE_ID, exchange.getFromRouteId(), String.class),
                LoggedFailure.describe(caught),
                exchange.getMessage().getHeader(Exchange.REDELIVERY_COUNTER, Integer.class),
                exchange.getMessage().getHeader(Exchange.REDELIVERY_MAX_COUNTER, Integer.class));
    }
}
