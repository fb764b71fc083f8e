package com.hospital.surveyinbox.config;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.camel.CamelContext;
import org.apache.camel.model.LogDefinition;
import org.apache.camel.model.Model;
import org.apache.camel.model.OnExceptionDefinition;
import org.apache.camel.model.ProcessorDefinition;
import org.apache.camel.model.ProcessorDefinitionHelper;
import org.apache.camel.model.RouteConfigurationDefinition;
import org.apache.camel.model.RouteDefinition;
import org.apache.camel.model.ToDefinition;
import org.apache.camel.model.ToDynamicDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Route steps that would write a message's payload or all its headers into the log, found once every route of
 * {@code routes/} is built: a {@code log} step whose message holds the whole body or all headers ({@code ${body}},
 * {@code ${bodyAs(String)}}, {@code ${headers}}, ...), a {@code log:} endpoint that shows the body (its default), a
 * call with {@code logHttpActivity=true}, a route with {@code trace} or {@code messageHistory} on. The payload holds
 * patient data and the reception's headers its sender's credentials. An engineer's debugging line edited into a route
 * file went to production unseen: {@link ProductionSafetyCheck} checks the settings that do this, not the routes. In
 * the prod profile the start fails naming each step; elsewhere each is a WARN. Parts a route names
 * ({@code ${body[inboxId]}}, {@code ${body.fresh()}}) are its author's choice and pass.
 */
@Component
public class RouteLoggingCheck implements org.apache.camel.spring.boot.CamelContextConfiguration {

    private static final Logger log = LoggerFactory.getLogger(RouteLoggingCheck.class);

    /** A Simple expression of the whole body (in any of its spellings) or of all the headers. */
    private static final Pattern WHOLE_MESSAGE = Pattern.compile("(?i)\\$\\{\\s*(?:in\\.|message\\.)?(?:body|bodyOneLine|prettyBody"
            + "|bodyAs\\([^)]*\\)|mandatoryBodyAs\\([^)]*\\)|headers|exchange|messageHistory(?:\\([^)]*\\))?)\\s*}");
    /** A log: endpoint that leaves the body out. */
    private static final Pattern LOG_WITHOUT_BODY = Pattern.compile("(?i)[?&]showBody=false(&|$)");
    private static final Pattern LOG_SHOWING_ALL = Pattern.compile("(?i)[?&](showAll|showHeaders)=true(&|$)");

    private final org.springframework.core.env.Environment environment;
    private volatile List<String> found = List.of();

    public RouteLoggingCheck(org.springframework.core.env.Environment environment) {
        this.environment = environment;
    }

    @Override
    public void beforeApplicationStart(CamelContext context) {
        boolean prod = ProductionSafetyCheck.prod(environment);
        try {
            context.addStartupListener((started, alreadyStarted) -> found = check(started, prod));
        } catch (Exception e) {
            throw new IllegalStateException("the route logging check could not be set up", e);
        }
    }

    /** What the last start found (none in prod: it would not have started). */
    public List<String> found() {
        return found;
    }

    private static List<String> check(CamelContext started, boolean prod) {
        List<String> problems = problems(started);
        if (problems.isEmpty()) {
            return problems;
        }
        if (prod) {
            throw new IllegalStateException("Refusing to start: route steps would log patient data or credentials"
                    + " (the prod profile): " + String.join("; ", problems));
        }
        problems.forEach(problem -> log.warn("{}: patient data or credentials in the log; the prod profile refuses"
                + " to start with it", problem));
        return problems;
    }

    @Override
    public void afterApplicationStart(CamelContext context) {
    }

    /** Each step of the context's routes and route configurations that would log the message, named. */
    public static List<String> problems(CamelContext context) {
        Model model = context.getCamelContextExtension().getContextPlugin(Model.class);
        List<String> problems = new ArrayList<>();
        for (RouteDefinition route : model.getRouteDefinitions()) {
            String where = "route " + route.getRouteId();
            if ("true".equalsIgnoreCase(route.getTrace())) {
                problems.add(where + ": trace is on (the tracer logs every message)");
            }
            if ("true".equalsIgnoreCase(route.getMessageHistory())) {
                problems.add(where + ": messageHistory is on (a failure's log shows the message)");
            }
            steps(where, route.getOutputs(), problems);
        }
        for (RouteConfigurationDefinition configuration : model.getRouteConfigurationDefinitions()) {
            for (OnExceptionDefinition onException : configuration.getOnExceptions()) {
                steps("routeConfiguration " + configuration.getId(), onException.getOutputs(), problems);
            }
        }
        return problems;
    }

    private static void steps(String where, List<ProcessorDefinition<?>> outputs, List<String> problems) {
        for (LogDefinition step : ProcessorDefinitionHelper.filterTypeInOutputs(outputs, LogDefinition.class)) {
            if (step.getMessage() != null && WHOLE_MESSAGE.matcher(step.getMessage()).find()) {
                problems.add(where + ", log " + id(step) + ": its message holds the whole body or all headers ("
                        + step.getMessage() + ")");
            }
        }
        ProcessorDefinitionHelper.filterTypeInOutputs(outputs, ToDefinition.class).forEach(to -> call(where, to, to.getUri(), problems));
        ProcessorDefinitionHelper.filterTypeInOutputs(outputs, ToDynamicDefinition.class).forEach(to -> call(where, to, to.getUri(), problems));
    }

    private static void call(String where, ProcessorDefinition<?> step, String uri, List<String> problems) {
        if (uri == null) {
            return;
        }
        if (uri.regionMatches(true, 0, "log:", 0, 4)
                && (!LOG_WITHOUT_BODY.matcher(uri).find() || LOG_SHOWING_ALL.matcher(uri).find())) {
            problems.add(where + ", " + id(step) + ": " + uri + " logs the message (add showBody=false)");
        } else if (uri.toLowerCase(java.util.Locale.ROOT).contains("loghttpactivity=true")) {
            problems.add(where + ", " + id(step) + ": " + uri + " logs each request and answer with their bodies");
        }
    }

    private static String id(ProcessorDefinition<?> step) {
        return step.hasCustomIdAssigned() ? step.getId() : step.getShortName();
    }
}
