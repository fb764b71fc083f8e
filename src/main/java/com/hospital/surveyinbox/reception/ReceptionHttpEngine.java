package com.hospital.surveyinbox.reception;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.camel.component.platform.http.spi.PlatformHttpEngine;
import org.apache.camel.component.platform.http.springboot.SpringBootPlatformHttpConsumer;
import org.apache.camel.component.platform.http.springboot.SpringBootPlatformHttpEngine;
import org.apache.camel.component.platform.http.springboot.CamelRequestHandlerMapping;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerAdapter;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.handler.MatchableHandlerMapping;
import org.springframework.web.servlet.handler.RequestMatchResult;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.servlet.ModelAndView;

/**
 * platform-http answers a reception on the container's request thread, in one servlet dispatch, without
 * Spring MVC's annotated-controller machinery around a handler that needs none of it.
 *
 * <p>The starter's default engine hands every request to Spring's task executor and returns a
 * {@code CompletableFuture}; Spring MVC then parks the request in servlet async mode and dispatches it a
 * second time through the whole filter chain and {@code DispatcherServlet} once the future completes.
 * For a reception whose work is a commit of about a millisecond, the hand-off and the second dispatch
 * cost more CPU than the work (measured with async-profiler on the accept path: the second dispatch
 * alone was 13 % of the service's CPU). Here the engine runs the route in the calling thread, so the
 * future is already complete when it returns. {@code adapter.reception.max-in-flight} (below Tomcat's
 * {@code server.tomcat.threads.max}) bounds concurrent receptions, including the slow synchronous path of the
 * rollback toggle ({@link ReceptionAdmissionFilter}).
 *
 * <p>{@link #platformHttpHandlerAdapter} calls the platform-http consumer's handler method directly. Spring
 * MVC's {@code RequestMappingHandlerAdapter} would build an invocable handler method, resolve the
 * (servlet request and response) arguments, create binder and model factories and walk its return-value
 * handlers for every request — JFR on the accept path found it searching the consumer's class hierarchy for
 * annotations on each request (2 % of the request threads' CPU for that search alone). The route has
 * written the response by the time {@code service} returns; nothing else is left to do. Handler mapping,
 * the filter chain (security, body limit, observation) and the route are unchanged.
 */
@Configuration(proxyBeanMethods = false)
public class ReceptionHttpEngine {

    @Bean(name = "platform-http-engine")
    PlatformHttpEngine platformHttpEngine(@Value("${server.port:8080}") int port) {
        return new SpringBootPlatformHttpEngine(port, Runnable::run);
    }

    /**
     * Spring MVC's controllers are matched before platform-http routes. The starter orders its mapping first (-1),
     * so a route path with a variable ({@code GET /ops/inbox/{inboxId}}, routes/inbox-ops.camel.yaml) would take
     * {@code GET /ops/inbox/stats} and {@code /ops/inbox/history} from their controller. Behind the controllers
     * (order 1, before static resources), a route gets every request no controller maps (the requeues of
     * routes/inbox-requeue.camel.yaml among them).
     */
    @Bean
    static BeanPostProcessor platformHttpAfterControllers() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                return bean instanceof CamelRequestHandlerMapping routes ? new AfterControllers(routes) : bean;
            }
        };
    }

    /** platform-http's request mapping, unchanged but for its order. */
    public record AfterControllers(CamelRequestHandlerMapping routes) implements MatchableHandlerMapping, Ordered {

        @Override
        public HandlerExecutionChain getHandler(HttpServletRequest request) throws Exception {
            return routes.getHandler(request);
        }

        @Override
        public boolean usesPathPatterns() {
            return routes.usesPathPatterns();
        }

        @Override
        public PathPatternParser getPatternParser() {
            return routes.getPatternParser();
        }

        @Override
        public RequestMatchResult match(HttpServletRequest request, String pattern) {
            return routes.match(request, pattern);
        }

        @Override
        public int getOrder() {
            return 1; // RequestMappingHandlerMapping (controllers) is 0
        }
    }

    @Bean
    HandlerAdapter platformHttpHandlerAdapter() {
        return new PlatformHttpHandlerAdapter();
    }

    /** Runs a platform-http route's handler ({@code SpringBootPlatformHttpConsumer.service}) as is. */
    static final class PlatformHttpHandlerAdapter implements HandlerAdapter, Ordered {

        @Override
        public boolean supports(Object handler) {
            return handler instanceof HandlerMethod method && method.getBean() instanceof SpringBootPlatformHttpConsumer;
        }

        @Override
        public ModelAndView handle(HttpServletRequest request, HttpServletResponse response, Object handler) throws Exception {
            SpringBootPlatformHttpConsumer consumer = (SpringBootPlatformHttpConsumer) ((HandlerMethod) handler).getBean();
            CompletableFuture<Void> done = consumer.service(request, response);
            try {
                // complete already (the engine runs the route on this thread); a route that continued on another
                // thread keeps this request thread until it has written the response, as the synchronous path does
                done.get();
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
            return null; // the response is written
        }

        @Override
        @SuppressWarnings("deprecation")
        public long getLastModified(HttpServletRequest request, Object handler) {
            return -1;
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE; // before RequestMappingHandlerAdapter, which supports every HandlerMethod
        }
    }
}
